// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// swiftAs is a plain Swift client of a project's member user ("demo" or "other"), for what the
// store does not do (container headers, other containers).
func swiftAs(t *testing.T, project string) *gophercloud.ServiceClient {
	t.Helper()
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		Username: project, Password: project + "pass", DomainName: "Default", TenantName: project})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := gopenstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func putObject(t *testing.T, sc *gophercloud.ServiceClient, container, name, content string) {
	t.Helper()
	opts := objects.CreateOpts{Content: strings.NewReader(content)}
	if _, err := objects.Create(context.Background(), sc, container, name, opts).Extract(); err != nil {
		t.Fatalf("PUT %s/%s: %v", container, name, err)
	}
}

func getObject(sc *gophercloud.ServiceClient, container, name string) (string, error) {
	res := objects.Download(context.Background(), sc, container, name, nil)
	b, err := res.ExtractContent()
	return string(b), err
}

// Finding 9c: in a container with Swift's legacy versioning a DELETE restores the previous version
// (X-Versions-Location) or archives a copy (X-History-Location). The deletion pass refuses with a
// configuration error that names the header, and counts nothing deleted; nothing in the archive
// container (not the extension's) is touched.
func TestLegacyVersioningIsRefusedNotCountedDeleted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		set    func(archive string) containers.UpdateOpts
	}{
		{"versions mode", "X-Versions-Location", func(a string) containers.UpdateOpts { return containers.UpdateOpts{VersionsLocation: a} }},
		{"history mode", "X-History-Location", func(a string) containers.UpdateOpts { return containers.UpdateOpts{HistoryLocation: a} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, sc := newStore(t, cloud.SecretData("demo")), swiftAs(t, "demo")
			name, archive := newContainerName(), newContainerName()
			if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
				t.Fatal(err)
			}
			if _, err := containers.Create(ctx, sc, archive, nil).Extract(); err != nil {
				t.Fatal(err)
			}
			if _, err := containers.Update(ctx, sc, name, tc.set(archive)).Extract(); err != nil {
				t.Fatal(err)
			}
			const key = "shoot--l--1/etcd-main/v2/Full-1"
			putObject(t, sc, name, key, "first")
			putObject(t, sc, name, key, "second") // "first" goes to the archive
			archived, err := listNames(sc, archive)
			if err != nil || len(archived) != 1 {
				t.Fatalf("archive holds %v (%v); want the first version: the cluster's legacy versioning is off", archived, err)
			}

			prefix, _ := objectstore.EntryPrefix("shoot--l--1")
			res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.header) || !strings.Contains(err.Error(), archive) {
				t.Fatalf("got %+v, %v; want a configuration error naming %s and the archive %s", res, err, tc.header, archive)
			}
			if res.Deleted != 0 || res.Done {
				t.Fatalf("got %+v; want nothing counted deleted and not done", res)
			}
			if got, err := getObject(sc, name, key); err != nil || got != "second" {
				t.Fatalf("the object reads %q, %v; want it untouched", got, err)
			}
			if after, _ := listNames(sc, archive); len(after) != 1 {
				t.Fatalf("the archive container now holds %v; it is not the extension's to change", after)
			}
		})
	}
}

func listNames(sc *gophercloud.ServiceClient, container string) ([]string, error) {
	pages, err := objects.List(sc, container, objects.ListOpts{}).AllPages(context.Background())
	if err != nil {
		return nil, err
	}
	return objects.ExtractNames(pages)
}
