// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestDeleteOfABucketThatEntriesStillName (finding 9e): a BackupBucket deleted while
// BackupEntries on the seed name it (also entries being deleted: their deletion needs the
// bucket) is not emptied: refused with ERR_CONFIGURATION_PROBLEM naming how many and a few,
// a warning event, nothing deleted; entries of other buckets do not hold it, and once the
// entries are gone the deletion goes through.
func TestDeleteOfABucketThatEntriesStillName(t *testing.T) {
	entry := func(name, bucket string, deleting bool) *extensionsv1alpha1.BackupEntry {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket}}
		if deleting {
			be.Finalizers = []string{"test/hold"}
		}
		return be
	}
	many := func(n int) []*extensionsv1alpha1.BackupEntry {
		var out []*extensionsv1alpha1.BackupEntry
		for i := range n {
			out = append(out, entry(fmt.Sprintf("shoot--p--s%02d--1", i), "bucket", false))
		}
		return out
	}
	cases := []struct {
		name     string
		entries  []*extensionsv1alpha1.BackupEntry
		deleting bool // the entries are being deleted
		want     []string
	}{
		{name: "no entries: deleted"},
		{name: "entries of another bucket only: deleted", entries: []*extensionsv1alpha1.BackupEntry{entry("shoot--p--s--1", "other", false)}},
		{name: "one entry names it", entries: []*extensionsv1alpha1.BackupEntry{entry("shoot--p--s--1", "bucket", false), entry("shoot--p--t--1", "other", false)},
			want: []string{"1 BackupEntries on this seed still name it in spec.bucketName (shoot--p--s--1)"}},
		{name: "a source entry being deleted names it", entries: []*extensionsv1alpha1.BackupEntry{entry("source-shoot--p--s--1", "bucket", true)}, deleting: true,
			want: []string{"1 BackupEntries", "(source-shoot--p--s--1)"}},
		{name: "many entries: a few named", entries: many(12), want: []string{"12 BackupEntries", "shoot--p--s00--1, shoot--p--s01--1, shoot--p--s02--1, shoot--p--s03--1, shoot--p--s04--1 and 7 more"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			keys := []string{"shoot--p--s--1/etcd-main/v2/Full-1", "shoot--p--t--1/etcd-main/v2/Full-1"}
			mem := controllertest.Bucket(t, "bucket", keys...)
			c8t := controllertest.Client()
			for _, be := range c.entries {
				if err := c8t.Create(ctx, be); err != nil {
					t.Fatal(err)
				}
				if c.deleting {
					if err := c8t.Delete(ctx, be); err != nil {
						t.Fatal(err)
					}
				}
			}
			recorder := events.NewFakeRecorder(10)
			a := backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: mem}), c8t, c8t, recorder, options.DeletionOptions{})
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{SecretRef: controllertest.SecretRef}}
			err := a.Delete(ctx, logr.Discard(), bb)
			left, lerr := conformance.ListKeys(ctx, mem, "bucket", "")
			if len(c.want) == 0 {
				if err != nil || !errors.Is(lerr, objectstore.ErrBucketNotFound) {
					t.Fatalf("Delete = %v, listing %v (%v); want the bucket deleted", err, left, lerr)
				}
				return
			}
			var inUse *backupbucket.InUseError
			if !errors.As(err, &inUse) {
				t.Fatalf("Delete = %v; want an *InUseError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("Delete = %v; want it to say %q", err, w)
				}
			}
			// As the library's reconciler writes status.lastError: from a requeue's cause; retried
			// with its back-off.
			if codes := v1beta1helper.ExtractErrorCodes(reconcilerutils.ReconcileErrCauseOrErr(err)); !slices.Equal(codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
				t.Fatalf("codes %v; want ERR_CONFIGURATION_PROBLEM", codes)
			}
			if lerr != nil || !slices.Equal(left, keys) {
				t.Fatalf("left %v (%v); want nothing deleted", left, lerr)
			}
			select {
			case ev := <-recorder.Events:
				if !strings.Contains(ev, backupbucket.ReasonBucketInUse) || !strings.Contains(ev, c.want[0]) {
					t.Fatalf("event %q; want %s saying %q", ev, backupbucket.ReasonBucketInUse, c.want[0])
				}
			default:
				t.Fatal("no event")
			}
			// Once the entries are gone (their finalizers released), the deletion goes through.
			for _, be := range c.entries {
				cur := &extensionsv1alpha1.BackupEntry{}
				if err := c8t.Get(ctx, client.ObjectKeyFromObject(be), cur); err != nil {
					t.Fatal(err)
				}
				cur.Finalizers = nil
				if err := c8t.Update(ctx, cur); err != nil {
					t.Fatal(err)
				}
				if err := c8t.Delete(ctx, cur); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			}
			if err := a.Delete(ctx, logr.Discard(), bb); err != nil {
				t.Fatalf("Delete after the entries are gone: %v", err)
			}
		})
	}
}
