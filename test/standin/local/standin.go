// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// Local is how etcd-druid runs etcd-backup-restore for a local entry: no credentials; the
// secret's hostPath names the directory whose "<bucket>" etcd-druid mounts at "$HOME/<bucket>",
// where the Local storage provider stores.
var Local = stack.Consumer{StorageProvider: "Local", HomeKey: "hostPath"}

// local: a temporary root directory, the extension's --local-root and the hostPath etcd-druid
// mounts for etcd-backup-restore. Gardener's local setup gives an empty secret. Handle is the root.
func init() {
	standin.Register(standin.StandIn{
		Type: localprovider.Type, Region: "local",
		// What etcd-druid reads for the Local storage provider (hostPath: the directory it
		// mounts "<bucketName>" of; etcd-backup-restore itself reads no secret).
		EtcdBackupKeys: []string{"bucketName", "hostPath"},
		Start: func(_ context.Context, _ testing.TB, region string) (*standin.World, error) {
			root, err := os.MkdirTemp("", "local-buckets-")
			if err != nil {
				return nil, err
			}
			c := framework.Registered(&localprovider.Provider{Root: root})
			operator := map[string][]byte{}
			probe := standin.Probed(c, operator, region, "")
			return &standin.World{
				What:     "a directory on this machine (etcd-backup-restore's Local storage provider)",
				Where:    "root " + root,
				Cloud:    c,
				Operator: operator,
				Flags:    []string{"--" + localprovider.FlagRoot, root},
				Consumer: Local,
				Describe: func(ctx context.Context, name string) (string, error) {
					if _, err := probe(ctx, name); err != nil {
						return "", err
					}
					return "directory " + filepath.Join(root, name) + " with the marker " + localprovider.MarkerFile, nil
				},
				Handle: root,
				Stop:   func() { _ = os.RemoveAll(root) },
			}, nil
		},
	})
}
