// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestSourceEntryDeletionKeepsTheLiveEntrysBackups (finding 5): a migration's source entry
// force-deleted while the live entry on this seed names the same bucket deletes nothing and is
// kept, with ERR_CONFIGURATION_PROBLEM and a LiveBackupsKept event; the operator's way out (its
// finalizers removed) leaves every object in place.
func TestSourceEntryDeletionKeepsTheLiveEntrysBackups(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--l--")
	env.EnsureNamespace(t, shoot)
	name := shoot + "--1"
	neighbours := framework.FillEntry(t, store(t), bb.Name, name+"/", 30)
	all, err := conformance.ListKeys(framework.Ctx(t), store(t), bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	live := env.CreateEntry(t, name, bb.Name, secretData(proxy.URL))
	env.WaitFor(t, live, time.Minute, "live entry reconciled", framework.Succeeded)
	src := env.CreateEntry(t, "source-"+name, bb.Name, secretData(proxy.URL))
	env.WaitFor(t, src, time.Minute, "source entry reconciled", framework.Succeeded)

	env.DeleteFailingWith(t, src, gardencorev1beta1.ErrorConfigurationProblem)
	if !env.EventuallyHasEvent(t, src.Name, backupentry.ReasonLiveBackupsKept, "names the same bucket", 10*time.Second) {
		t.Errorf("no %s event", backupentry.ReasonLiveBackupsKept)
	}
	framework.AssertOnly(t, store(t), bb.Name, all)
	cur := &extensionsv1alpha1.BackupEntry{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(src), cur); err != nil || !slices.Contains(cur.Finalizers, entryinfo.FinalizerName) {
		t.Fatalf("source entry %v, finalizers %v; want it kept by %s", err, cur.Finalizers, entryinfo.FinalizerName)
	}

	env.Forget(t, src) // the documented way out: its finalizers removed
	framework.AssertOnly(t, store(t), bb.Name, all)
	env.DeleteAndWaitGone(t, live, time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

// TestBucketDeletionWaitsForItsEntries (finding 9e): a BackupBucket deleted while an entry
// names it empties nothing (ERR_CONFIGURATION_PROBLEM, a BucketInUse event); once the entry is
// gone, its deletion goes through.
func TestBucketDeletionWaitsForItsEntries(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--u--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secretData(proxy.URL))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 20)
	all, err := conformance.ListKeys(framework.Ctx(t), store(t), bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}

	env.DeleteFailingWith(t, bb, gardencorev1beta1.ErrorConfigurationProblem)
	if !env.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonBucketInUse, be.Name, 10*time.Second) {
		t.Errorf("no %s event naming %s", backupbucket.ReasonBucketInUse, be.Name)
	}
	framework.AssertOnly(t, store(t), bb.Name, all)

	env.DeleteAndWaitGone(t, be, time.Minute)
	env.Trigger(t, bb) // instead of waiting out the back-off
	for deadline := time.Now().Add(time.Minute); !apierrors.IsNotFound(env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(bb), bb)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("bucket not deleted after its entry was gone: %s", framework.Describe(bb))
		}
	}
	if bucketExists(t, bb.Name) {
		t.Fatalf("bucket %q survived its BackupBucket", bb.Name)
	}
}
