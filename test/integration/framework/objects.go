// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// FillEntry writes n snapshot objects under prefix ("<entry>/") and three neighbours whose names
// extend the entry's name ("<entry>0/...", "<entry>x/..."), and returns the neighbours: a
// deletion of the entry must leave exactly them.
func FillEntry(t *testing.T, store objectstore.Writer, bucket, prefix string, n int) []string {
	t.Helper()
	keys := make([]string, 0, n+3)
	for i := range n {
		keys = append(keys, fmt.Sprintf("%setcd-main/v2/Full-%06d", prefix, i))
	}
	base := strings.TrimSuffix(prefix, "/")
	neighbours := []string{base + "0/etcd-main/v2/Full-000000", base + "0/etcd-main/v2/Incr-000001", base + "x/etcd-main/v2/Full-000000"}
	if err := conformance.PutMany(Ctx(t), store, bucket, append(keys, neighbours...)); err != nil {
		t.Fatal(err)
	}
	return neighbours
}

// AssertOnly fails unless the bucket holds exactly the keys want.
func AssertOnly(t *testing.T, store objectstore.DataPlane, bucket string, want []string) {
	t.Helper()
	left, err := conformance.ListKeys(Ctx(t), store, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		if len(left) > 10 {
			left = append(left[:10], fmt.Sprintf("... (%d in all)", len(left)))
		}
		t.Fatalf("bucket holds %v; want exactly %v", left, want)
	}
}

// BadSecretDeletesNothing is the flow of an entry whose credentials turn bad before its deletion:
// an entry of bucket with the secret data, filled with 20 objects beside their neighbours, gets
// the secret's key set to bad; its deletion fails with code, and nothing in the bucket is
// deleted. It returns the entry and the neighbours, for the caller to fix the secret or forget
// the entry.
func (e *Env) BadSecretDeletesNothing(t *testing.T, store conformance.Stores, bucket string, data map[string][]byte, key, bad string, code gardencorev1beta1.ErrorCode) (*extensionsv1alpha1.BackupEntry, []string) {
	t.Helper()
	shoot := UniqueName("shoot--k--")
	e.EnsureNamespace(t, shoot)
	be := e.CreateEntry(t, shoot+"--1", bucket, data)
	e.WaitFor(t, be, time.Minute, "entry reconciled", Succeeded)
	neighbours := FillEntry(t, store, bucket, shoot+"--1/", 20)
	e.SetEntrySecretKey(t, be, key, bad)
	e.DeleteFailingWith(t, be, code)
	if left, err := conformance.ListKeys(Ctx(t), store, bucket, ""); err != nil || len(left) != 20+len(neighbours) {
		t.Fatalf("%d objects left (%v); a failing deletion must delete nothing", len(left), err)
	}
	return be, neighbours
}
