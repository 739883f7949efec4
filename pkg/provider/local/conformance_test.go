// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
)

var seq atomic.Int64

func newBucketName() string { return fmt.Sprintf("bucket-%d", seq.Add(1)) }

// storesOf builds the Stores of p with Gardener's local setup's empty secret.
func storesOf(t *testing.T, p *local.Provider) conformance.Stores {
	return conformance.StoresFor(t, p, provider.Credentials{Data: map[string][]byte{}}, &localapi.BackupBucketConfig{})
}

// TestConformanceOnADirectory runs the suite on a temporary directory: the store is the real
// filesystem, no stand-in.
func TestConformanceOnADirectory(t *testing.T) {
	root := t.TempDir()
	conformance.Run(t, conformance.Harness{
		Store:         storesOf(t, &local.Provider{Root: root}),
		NewBucketName: newBucketName,
		SmallPages:    storesOf(t, &local.Provider{Root: root, ListPageSize: 3}).DataPlane,
		// A directory of the bucket's name that this extension did not make (no marker in it),
		// as gardener's provider-local makes them.
		ForeignBucket: func(t *testing.T) string {
			name := newBucketName()
			if err := os.Mkdir(filepath.Join(root, name), 0o775); err != nil {
				t.Fatal(err)
			}
			return name
		},
		Unsupported: []conformance.Feature{
			// A directory needs no credentials: there are no wrong ones.
			conformance.BadCredentials,
			// A directory has no region.
			conformance.Regions,
			// A file has one version: a write replaces it.
			conformance.Versions,
			// A filesystem has no retention locks, so no deferred deletion either (DeferDeletion
			// answers ErrUnsupported).
			conformance.Locks, conformance.Deferral, conformance.DeferralReadBack,
			// etcd-backup-restore's local snapstore has no exclude mark (local_snapstore.go:72).
			conformance.ExcludeMark,
		},
	})
}

func credsOf(data map[string][]byte) provider.Credentials { return provider.Credentials{Data: data} }
