package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestBulkDeleteFollowsTheAdvertisedLimit(t *testing.T) {
	bulk := newStore(t, cloud.SecretData("demo"))
	noBulk := newStore(t, with(cloud.SecretData("demo"), "region", "NoBulk"))
	if got := bulk.MaxDeleteBatch(); got != maxDeletes {
		t.Fatalf("with bulk delete: batch %d; want the cluster's advertised %d", got, maxDeletes)
	}
	if got := noBulk.MaxDeleteBatch(); got == maxDeletes {
		t.Fatalf("without bulk delete the batch is still the bulk limit %d", got)
	}
	// More objects than one bulk request takes: chunked, all deleted, the neighbour intact.
	ctx := context.Background()
	name := newContainerName()
	if err := bulk.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 3*maxDeletes + 7 {
		keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
	}
	if err := conformance.PutMany(ctx, bulk, name, append(keys, "shoot--a--b--10/keep")); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, bulk, name, prefix, objectstore.DeleteOptions{Parallelism: 1})
	if err != nil || !res.Done || res.Deleted != len(keys) {
		t.Fatalf("got %+v, %v; want all %d deleted", res, err, len(keys))
	}
	left, _ := conformance.ListKeys(ctx, bulk, name, "")
	if len(left) != 1 || left[0] != "shoot--a--b--10/keep" {
		t.Fatalf("left %v; want only the neighbour", left)
	}
}

func TestVersionedContainerDeletesEveryVersion(t *testing.T) {
	ctx := context.Background()
	store, name := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{Versioning: true}), newContainerName()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if err := conformance.PutMany(ctx, store, name, []string{"shoot--v--1/a", "shoot--v--1/b", fmt.Sprintf("shoot--v--10/keep-%d", round)}); err != nil {
			t.Fatal(err)
		}
	}
	versions := 0
	if err := store.ListObjects(ctx, name, "shoot--v--1/", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Version == "" {
				return fmt.Errorf("%s listed without a version in a versioned container", o.Key)
			}
			versions++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if versions != 6 {
		t.Fatalf("listed %d versions under the prefix; want 6 (2 objects x 3 writes)", versions)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--v--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done {
		t.Fatalf("got %+v, %v", res, err)
	}
	again := 0
	_ = store.ListObjects(ctx, name, "shoot--v--1/", func(page []objectstore.ObjectVersion) error { again += len(page); return nil })
	if again != 0 {
		t.Fatalf("%d versions survived the deletion", again)
	}
	left, _ := conformance.ListKeys(ctx, store, name, "shoot--v--10/")
	if len(left) != 3 {
		t.Fatalf("the neighbour's objects were touched: %v", left)
	}
}

func TestCredentialErrorsNameTheKey(t *testing.T) {
	base := cloud.SecretData("demo")
	cases := map[string]struct {
		data    map[string][]byte
		mention string
	}{
		"no authURL":          {with(base, "authURL", ""), "authURL"},
		"no password":         {with(base, "password", ""), "password"},
		"app secret alone":    {with(base, "applicationCredentialSecret", "s", "username", "", "password", ""), "applicationCredentialID"},
		"app name needs user": {with(base, "applicationCredentialSecret", "s", "applicationCredentialName", "n", "username", ""), "username"},
		"bad insecure":        {with(base, "insecure", "sometimes"), "insecure"},
		"bad CA":              {with(base, "caCert", "not a certificate"), "caCert"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := testProvider.NewStore(context.Background(), provider.Credentials{Data: c.data, Region: "RegionOne"}, nil)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("got %v; want ErrInvalidConfig naming %q", err, c.mention)
			}
			if strings.Contains(err.Error(), "demopass") {
				t.Fatalf("the error reveals the password: %v", err)
			}
		})
	}
}

func TestUnknownRegionIsAConfigurationError(t *testing.T) {
	store := newStore(t, with(cloud.SecretData("demo"), "region", "Atlantis"))
	err := store.EnsureBucket(context.Background(), objectstore.Bucket{Name: newContainerName(), Region: "Atlantis"})
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "Atlantis") {
		t.Fatalf("got %v; want ErrInvalidConfig naming the region", err)
	}
}

func TestEtcdBackupSecretData(t *testing.T) {
	entry := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne"}}
	in := with(cloud.SecretData("demo"), "bucketName", "b", "stray.json", "{}", "caCert", "", "region", "")
	out, err := testProvider.EtcdBackupSecretData(entry, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"authURL", "bucketName", "domainName", "password", "region", "tenantName", "username"}
	var got []string
	for k := range out {
		got = append(got, k)
	}
	if len(got) != len(want) {
		t.Fatalf("keys %v; want exactly %v", got, want)
	}
	for _, k := range want {
		if _, ok := out[k]; !ok {
			t.Fatalf("missing %q in %v", k, got)
		}
	}
	if string(out["region"]) != "RegionOne" {
		t.Fatalf("region %q", out["region"])
	}
	if _, err := testProvider.EtcdBackupSecretData(entry, with(in, "password", "")); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("an entry secret without a password: %v; want ErrInvalidConfig", err)
	}
}
