// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// TestCreateNeverReplacesADirectoryMadeMeanwhile: between EnsureBucket's check and its rename,
// someone else may make an empty directory of the bucket's name; the rename must not replace it
// (a plain rename(2) would).
func TestCreateNeverReplacesADirectoryMadeMeanwhile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "b1")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m := &management{store: &store{root: root, pageSize: 10}}
	if err := m.create(context.Background(), "b1", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("the directory made meanwhile was replaced by ours: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the directory made meanwhile changed: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Fatalf("the root holds %d entries; want the one directory (no temporary left)", len(entries))
	}
}

// TestPlanBucketIsWhatEnsureBucketDoes: a missing bucket is planned and not made; after
// EnsureBucket nothing is planned; a mode changed by hand is named, and EnsureBucket then leaves
// nothing to plan.
func TestPlanBucketIsWhatEnsureBucketDoes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	m := &management{store: &store{root: root, pageSize: 10}}
	b := objectstore.Bucket{Name: "b1"}
	plan := func() []string { return conformance.Plan(ctx, t, m, b) }
	if got := plan(); len(got) != 1 || got[0] != "create bucket" {
		t.Fatalf("plan of a missing bucket: %v", got)
	}
	if _, err := os.Stat(filepath.Join(root, "b1")); !os.IsNotExist(err) {
		t.Fatalf("PlanBucket made the bucket: %v", err)
	}
	if err := m.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket: %v; want nothing", got)
	}
	if err := os.Chmod(filepath.Join(root, "b1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 1 || got[0] != "update directory mode" {
		t.Fatalf("plan with drift: %v", got)
	}
	if err := m.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket corrected the drift: %v; want nothing", got)
	}
}
