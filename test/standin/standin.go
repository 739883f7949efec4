// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package standin is the one list of the providers' test stand-ins: for each provider type, the
// store it runs against here (MinIO, fake-gcs-server behind the GCS front, Azurite, Swift and
// Keystone, a directory), the tools hack/tools.sh builds for it, the operator's credentials and
// providerConfig that reach it, and how etcd-druid runs etcd-backup-restore against it. Each
// provider's stand-in is its own package, test/standin/<type> (file standin.go), registering its
// StandIn in init: the demo of test/demo/<type> imports one and so compiles only that provider's
// SDK and stand-in; test/standin/all imports every one, for the consumer contract
// (test/integration/consumer) and the drill tests, which know no provider by name.
// pkg/provider/all's pieces test fails while a provider of all.Types has no stand-in.
package standin

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// StandIn is how one provider is stood in for here.
type StandIn struct {
	// Type is the provider's extension type.
	Type string
	// Region is the region its tests use (example/<type>'s).
	Region string
	// Tools are the hack/tools.sh components the stand-in needs beyond envtest and
	// etcd-backup-restore (`hack/tools.sh demo <tools...>`); none for a store the machine has.
	Tools []string
	// EtcdBackupKeys are exactly the keys the shoot's etcd-backup holds with World.Operator: the
	// keys etcd-backup-restore (or etcd-druid) reads for the store.
	EtcdBackupKeys []string
	// ManifestUploads: the sidecar uploads every snapshot as a large object (etcd-backup-restore's
	// Swift store: segments and a manifest), which the listing shows with 0 bytes.
	ManifestUploads bool
	// Start starts the store for region; t takes the cleanups of what lives as long as the
	// caller (the demo's runner, or a test). World.Stop stops the store.
	Start func(ctx context.Context, t testing.TB, region string) (*World, error)
}

// World is a started stand-in.
type World struct {
	// What is started and Where it listens, for the demo's account.
	What, Where string
	// Cloud is the provider, its test seams pointed at the stand-in.
	Cloud framework.Cloud
	// Operator are the operator's credentials reaching the store (a BackupBucket's secret).
	Operator map[string][]byte
	// ProviderConfig is the BackupBucket's providerConfig the store needs ("" for the
	// defaults: a stand-in may lack a setting the defaults converge).
	ProviderConfig string
	// Flags are the extension binary's own flags for this store.
	Flags []string
	// Consumer is how etcd-druid runs etcd-backup-restore with the operator's credentials.
	Consumer stack.Consumer
	// Describe tells a bucket's settings, or fails if it does not exist.
	Describe func(ctx context.Context, bucket string) (string, error)
	// Handle is the started stand-in itself (*awsstack.MinIO, *gcpstack.GCS, *azure.Azure,
	// *openstackstack.OpenStack, the root directory), for a provider's own tests beyond the
	// shared ones.
	Handle any
	Stop   func()
}

var standIns = map[string]StandIn{}

// Register adds s: each provider's package here (test/standin/<type>) registers its stand-in in
// init, so that a binary links exactly the stand-ins it imports (the demo of test/demo/<type> one,
// test/standin/all every one). A type registered twice is a programming error.
func Register(s StandIn) {
	if _, ok := standIns[s.Type]; ok {
		panic(fmt.Sprintf("stand-in %q registered twice", s.Type))
	}
	standIns[s.Type] = s
}

// All returns every stand-in, sorted by type.
func All() []StandIn {
	out := make([]StandIn, 0, len(standIns))
	for _, s := range standIns {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b StandIn) int {
		if a.Type < b.Type {
			return -1
		}
		if a.Type > b.Type {
			return 1
		}
		return 0
	})
	return out
}

// For returns the stand-in of a provider type.
func For(typ string) (StandIn, bool) {
	s, ok := standIns[typ]
	return s, ok
}

// Probed describes a bucket by probing it with the operator's credentials.
func Probed(c framework.Cloud, operator map[string][]byte, region, what string) func(context.Context, string) (string, error) {
	return func(ctx context.Context, bucket string) (string, error) {
		data, err := c.NewDataPlane(ctx, provider.Credentials{Data: operator, Region: region})
		if err != nil {
			return "", err
		}
		if err := data.Probe(ctx, bucket); err != nil {
			return "", err
		}
		return what, nil
	}
}
