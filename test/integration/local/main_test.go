// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package local_test runs the real local controllers in a manager against a real kube-apiserver
// and etcd (envtest) and a real directory: no stand-in, the filesystem is the store.
package local_test

import (
	"fmt"
	"os"
	"testing"

	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

const (
	region     = "local"
	configHead = `{"apiVersion":"local.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
)

var (
	env  *framework.Env
	root string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if root, err = os.MkdirTemp("", "local-buckets-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(root) }()
	if env, err = framework.Start(&localprovider.Provider{Root: root}, region); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
