// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"errors"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// TestEntryLive: the Guard of a pass past its deadline lets a write commit only while the
// entry, read from the API reader, is the pass's and not being deleted.
func TestEntryLive(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		change func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry)
		want   error
	}{
		{"live", func(*testing.T, client.Client, *extensionsv1alpha1.BackupEntry) {}, nil},
		{"being deleted", func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry) {
			be.Finalizers = []string{"test"}
			if err := c.Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, be); err != nil {
				t.Fatal(err)
			}
		}, ErrEntryDeleted},
		{"gone", func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry) {
			if err := c.Delete(ctx, be); err != nil {
				t.Fatal(err)
			}
		}, ErrEntryDeleted},
		{"another object of its name", func(*testing.T, client.Client, *extensionsv1alpha1.BackupEntry) {}, ErrEntryDeleted},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "shoot--p--live--1"
			rig := newCopyRig(t, memstore.New(10), name, controllertest.Config{}, now)
			be := &extensionsv1alpha1.BackupEntry{}
			if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
				t.Fatal(err)
			}
			pass := be.DeepCopy() // the entry as the pass read it
			c.change(t, rig.c, be)
			if c.name == "another object of its name" {
				pass.UID = types.UID("the pass's") // the pass's entry was deleted and created again
			}
			err := rig.cp.entryLive(pass)(ctx)
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("entryLive: %v; want %v", err, c.want)
			}
		})
	}
}

// TestPassDeadline: a test may shorten the pass's deadline, never lengthen it past the one an
// entry's deletion waits for.
func TestPassDeadline(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{
		{0, connect.CopyPassDeadline},
		{time.Second, time.Second},
		{connect.CopyPassDeadline + time.Minute, connect.CopyPassDeadline},
	} {
		if got := (Options{PassDeadline: c.set}).deadline(); got != c.want {
			t.Errorf("PassDeadline %s: %s; want %s", c.set, got, c.want)
		}
	}
}
