// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
)

// providerWorld is one provider in the suite: its stand-in, its two seeds (each its own API
// server, the provider's real binary and gardenlet's controllers for that seed name), and what
// the cases need to know of the provider. Every provider runs the same cases (TestProviders).
type providerWorld struct {
	typ, region string
	// a and b are the provider's two seeds: a has every bucket but a migration's target.
	a, b *seedWorld
	// operator is the operator's credentials for the stand-in (the core BackupBuckets' secret).
	operator func() map[string][]byte
	// bucketConfig is a plain bucket's providerConfig (keys sorted, see fixtures_test.go).
	bucketConfig string
	// lockedConfig is a bucket whose objects the store locks for a day; "" when the stand-in or
	// the provider cannot lock, and noLock says exactly why.
	lockedConfig, noLock string
	// consumer is how etcd-druid runs etcd-backup-restore for this provider against the stand-in.
	consumer stack.Consumer
	// liveNotExpired fails for every snapshot in live (written into bucket by the live entry) that
	// the store's lifecycle will remove later; nil when the store has none the extension writes
	// (noLifecycle says why).
	liveNotExpired func(t *testing.T, bucket string, live []string)
	noLifecycle    string
	// sourceLeftDeferred, when set, checks what the source entry's deletion on the other seed
	// left under its prefix in the locked source bucket (left: the current keys).
	sourceLeftDeferred func(t *testing.T, bucket string, left []string)
	// storeData, when set, is what the test's own stores need beside a secret's data (an
	// etcd-backup secret names no emulator: azure's emulatorEnabled).
	storeData []string
}

// storeFor is a store of the provider from a secret's data (with storeData), for the test's own
// reads and writes and the stand-in for etcd-druid's copy job.
func (p *providerWorld) storeFor(t *testing.T, data map[string][]byte) conformance.Stores {
	t.Helper()
	if len(p.storeData) > 0 {
		data = stack.With(data, p.storeData...)
	}
	return p.a.fw.StoreFor(t, data)
}

// worldSpec starts a provider's world for the test t (stopped when t ends).
type worldSpec struct {
	typ   string
	start func(t *testing.T) *providerWorld
}

// worldSpecs are the providers, in the order they run: one at a time, each world started once
// and stopped before the next starts (two cores).
var worldSpecs = []worldSpec{
	{"aws", awsWorld},
	{"gcp", gcpWorld},
	{"azure", azureWorld},
	{"openstack", openstackWorld},
}

// awsWorld is the shared stack of TestMain: MinIO behind the proxy, seed-a and seed-b.
func awsWorld(*testing.T) *providerWorld {
	return &providerWorld{
		typ: "aws", region: region, a: seeds[seedA], b: seeds[seedB],
		operator: operatorData, bucketConfig: bucketConfig, lockedConfig: lockedConfig,
		consumer: awsstack.S3Consumer, liveNotExpired: assertNotExpired,
	}
}

// gcpWorld is fake-gcs-server behind the GCS front (gcpstack.GCS), with a service account key of the
// operator. The front plays a bucket's retention policy (objects younger than the period cannot
// be deleted or overwritten) and runs the lifecycle rules the extension writes (RunLifecycle).
func gcpWorld(t *testing.T) *providerWorld {
	gcs, err := gcpstack.StartGCS(gcpstack.GCSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gcs.Stop)
	const region = "europe-west1"
	operator := gcs.SecretData()
	w := &providerWorld{
		typ: "gcp", region: region,
		operator:     func() map[string][]byte { return operator },
		bucketConfig: `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`,
		lockedConfig: `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","immutability":{"retentionPeriod":"24h","retentionType":"bucket"},"kind":"BackupBucketConfig"}`,
		consumer:     gcpstack.GCSConsumer(t, gcs),
		liveNotExpired: func(t *testing.T, bucket string, live []string) {
			t.Helper()
			// Everything GCS's lifecycle would do from now on: at a time past every retention.
			deleted, err := gcs.RunLifecycle(bucket, time.Now().Add(400*24*time.Hour))
			if err != nil {
				t.Fatalf("running bucket %s's lifecycle rules: %v", bucket, err)
			}
			for _, d := range deleted {
				name, _, _ := strings.Cut(d, "#")
				if slices.Contains(live, name) {
					t.Errorf("bucket %s's lifecycle rules delete the live entry's new snapshot %s (generation %s)", bucket, name, strings.TrimPrefix(d, name+"#"))
				}
			}
			t.Logf("bucket %s's lifecycle rules, run past every retention, delete %d object generations: %v", bucket, len(deleted), deleted)
		},
	}
	w.a, w.b = startProviderSeeds(t, w, &gcpprovider.Provider{IAMEndpoint: gcs.URL + "/"})
	return w
}

// openstackWorld is Keystone and Swift (hack/openstack.sh) with the demo user's password.
func openstackWorld(t *testing.T) *providerWorld {
	cloud, err := openstackstack.StartOpenStack(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cloud.Stop)
	w := &providerWorld{
		typ: "openstack", region: "RegionOne",
		operator:     func() map[string][]byte { return cloud.SecretData("demo") },
		bucketConfig: `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`,
		noLock:       "openstack: Swift offers no object lock or retention (providerConfig.immutability is refused)",
		consumer:     openstackstack.SwiftConsumer,
		noLifecycle:  "openstack: Swift has no lifecycle rules; the extension never defers a deletion there",
	}
	w.a, w.b = startProviderSeeds(t, w, &osprovider.Provider{})
	return w
}

// startProviderSeeds builds w's binary and starts its two seeds, "<type>-seed-a" and
// "<type>-seed-b", stopped when t ends. p is the test's own view of the provider (store helpers);
// flags are the binary's provider flags (azure: its cloud and CA files).
func startProviderSeeds[C config.ProviderConfig](t *testing.T, w *providerWorld, p provider.TestCloud[C], flags ...string) (a, b *seedWorld) {
	t.Helper()
	binary, err := stack.BuildBinary(workDir, w.typ)
	if err != nil {
		t.Fatal(err)
	}
	return startTestSeed(t, w.typ+"-seed-a", binary, p, w.region, flags...), startTestSeed(t, w.typ+"-seed-b", binary, p, w.region, flags...)
}

// startTestSeed starts the seed name with binary (startSeed) for the test t: registered in seeds
// while t runs, stopped when it ends.
func startTestSeed[C config.ProviderConfig](t *testing.T, name, binary string, p provider.TestCloud[C], region string, flags ...string) *seedWorld {
	t.Helper()
	sw, stop, err := startSeed(context.Background(), name, binary, filepath.Join(workDir, name), p, region, flags...)
	t.Cleanup(func() { delete(seeds, name); stop() })
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	seeds[name] = sw
	return sw
}
