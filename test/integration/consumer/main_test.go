// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package consumer_test proves the etcd-backup secret against its consumer: for every provider
// and credential mode, the real controllers write etcd-backup, and the real etcd-backup-restore
// (the version hack/tools.sh pins), given the secret as etcd-druid mounts it, backs up a real
// etcd (full and delta snapshots), keeps doing so across a credential rotation, and restores it.
// See docs/etcd-backup-secret.md for the key contract these tests prove.
package consumer_test

import (
	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// envtest logs through controller-runtime's root logger; the controllers' own log is the
// framework's (TEST_LOG).
func init() { logf.SetLogger(logr.Discard()) }
