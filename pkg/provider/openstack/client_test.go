// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// newApplicationCredential creates a real application credential for the demo user in Keystone.
func newApplicationCredential(t *testing.T) *applicationcredentials.ApplicationCredential {
	t.Helper()
	ctx := context.Background()
	identity, userID := keystone(t)
	name := fmt.Sprintf("geb-backup-%d", time.Now().UnixNano())
	for attempt := 0; ; attempt++ { // Keystone on sqlite sometimes answers 500 "database is locked"
		ac, err := applicationcredentials.Create(ctx, identity, userID, applicationcredentials.CreateOpts{Name: name}).Extract()
		if err == nil {
			return ac
		}
		if attempt == 5 || !gophercloud.ResponseCodeIs(err, http.StatusInternalServerError) {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func TestApplicationCredentials(t *testing.T) {
	ac := newApplicationCredential(t)
	ctx := context.Background()
	byID := newStore(t, map[string][]byte{
		"authURL": []byte(cloud.AuthURL), "region": []byte("RegionOne"),
		"applicationCredentialID": []byte(ac.ID), "applicationCredentialSecret": []byte(ac.Secret),
	})
	// The container is made with the operator's secret: a management plane refuses a secret
	// without domainName, which etcd-backup-restore needs (bucketCheck); authenticating by the
	// application credential's ID is what the data plane shows here.
	name := newContainerName()
	if err := newStore(t, cloud.SecretData("demo")).EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	if err := byID.PutObject(ctx, name, "shoot--a--b--1/x", []byte("v")); err != nil {
		t.Fatalf("with an application credential by ID: %v", err)
	}
	byName := newStore(t, map[string][]byte{
		"authURL": []byte(cloud.AuthURL), "region": []byte("RegionOne"), "username": []byte("demo"), "domainName": []byte("Default"),
		"applicationCredentialName": []byte(ac.Name), "applicationCredentialSecret": []byte(ac.Secret),
	})
	keys, err := conformance.ListKeys(ctx, byName, name, "shoot--a--b--1/")
	if err != nil || len(keys) != 1 {
		t.Fatalf("with an application credential by name: %v, %v", keys, err)
	}
	wrong := newStore(t, map[string][]byte{
		"authURL": []byte(cloud.AuthURL), "region": []byte("RegionOne"),
		"applicationCredentialID": []byte(ac.ID), "applicationCredentialSecret": []byte("wrong"),
	})
	if _, err := conformance.ListKeys(ctx, wrong, name, ""); !errorsIsUnauthenticated(err) {
		t.Fatalf("a wrong application credential secret: %v; want ErrUnauthenticated", err)
	}
}

func TestUnknownRegionIsAConfigurationError(t *testing.T) {
	store := newStore(t, with(cloud.SecretData("demo"), "region", "Atlantis"))
	err := store.EnsureBucket(context.Background(), objectstore.Bucket{Name: newContainerName(), Region: "Atlantis"})
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "Atlantis") {
		t.Fatalf("got %v; want ErrInvalidConfig naming the region", err)
	}
}
