// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// operatorOnlyConfig is a seed where the switch ran with the operator's credentials only (step 6
// of the switch not reached), as docs/migrating.md's abort assumes.
const operatorOnlyConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"kind":"BackupBucketConfig"}`

// TestAbortAfterAHalfWaySwitch follows docs/migrating.md, "Aborting a switch that fails
// half-way", on a seed where this extension ran, with gardenlet's real controllers and MinIO:
// step 1 tells that it ran (condition BucketAvailable, the entries' finalizer); step 2 hands the
// seed back (handBack, nothing else), which completes by itself with the core BackupBucket
// Succeeded throughout. Nothing is lost: every object, each entry's secret and etcd-backup
// secret (every key, as etcd-druid mounts it) are as before, and the entries no longer carry
// this extension's finalizer. Step 3 (the registrations) is gardener's and is not played here;
// neither is the incumbent (it does not run in this stack): test/integration/incumbent's
// TestAbortAfterAHalfWaySwitch plays the abort to the end with the incumbent's real code.
func TestAbortAfterAHalfWaySwitch(t *testing.T) {
	requireStack(t)
	p := awsWorld(t)
	bb := coreBucket(t, operatorOnlyConfig)
	waitBucket(t, bb.Name, 2*time.Minute, "Succeeded", bucketSucceeded)
	operator := p.storeFor(t, p.operator())
	shoots := []shoot{newShoot(t), newShoot(t)}
	for _, s := range shoots {
		coreEntry(t, s, "", bb.Name, seedA, nil)
		waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded", entrySucceeded(""))
		framework.FillEntry(t, operator, bb.Name, s.entryName()+"/", 3)
	}

	// Step 1: this extension ran on the seed.
	eventually(t, time.Minute, "condition BucketAvailable (only this extension writes it)", func() (bool, string) {
		c := v1beta1helper.GetCondition(extensionBucket(t, bb.Name).Status.Conditions, backupbucket.ConditionBucketAvailable)
		return c != nil, "no condition BucketAvailable"
	})
	for _, s := range shoots {
		if !heldByUs(t, s.entryName()) {
			t.Fatalf("entry %s does not carry this extension's finalizer before the abort", s.entryName())
		}
	}
	keys, err := conformance.ListKeys(ctx(), operator, bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]map[string][]byte{}
	for _, s := range shoots {
		secrets[s.technicalID()+"/etcd-backup"] = secretData(t, seed, s.technicalID(), "etcd-backup")
		secrets[gardenNamespace+"/entry-"+s.entryName()] = secretData(t, seed, gardenNamespace, "entry-"+s.entryName())
	}

	// Step 2: hand the seed back; it completes by itself.
	setCoreProviderConfig(t, bb, handBackConfig)
	waitHandBack(t, bb.Name, 3*time.Minute, backupbucket.ReasonHandedBack, "The bucket is handed back")
	waitBucket(t, bb.Name, time.Minute, "Succeeded after the hand-back", bucketSucceeded)

	after, err := conformance.ListKeys(ctx(), operator, bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after, keys) {
		t.Errorf("objects after the abort's hand-back: %v; want every one kept: %v", after, keys)
	}
	for _, s := range shoots {
		for name, before := range map[string]map[string][]byte{
			s.technicalID() + "/etcd-backup":            secretData(t, seed, s.technicalID(), "etcd-backup"),
			gardenNamespace + "/entry-" + s.entryName(): secretData(t, seed, gardenNamespace, "entry-"+s.entryName()),
		} {
			if !maps.EqualFunc(before, secrets[name], bytes.Equal) {
				t.Errorf("secret %s changed by the abort's hand-back: keys %v, before %v", name, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(secrets[name])))
			}
		}
		if heldByUs(t, s.entryName()) {
			t.Errorf("entry %s still carries this extension's finalizer after the abort's hand-back", s.entryName())
		}
		waitEntry(t, s.entryKey(), time.Minute, "gardenlet shows the entry Succeeded", entrySucceeded(""))
	}
}

// TestEntryDeletedWhileTheHandBackWaits (issue 43): while the hand-back waits
// (WaitingForSettings: entryCredentials still on), this extension is still in charge of the
// bucket's entries: one reconciled meanwhile keeps its finalizer, and one deleted meanwhile is
// deleted by this extension (its prefix emptied, its neighbour's objects kept, its own principal
// revoked). Until issue 43's fix, an entry reconciled while handBack was set dropped the
// finalizer at once, and one whose secret went first would have been removed with nothing
// deleted.
func TestEntryDeletedWhileTheHandBackWaits(t *testing.T) {
	requireStack(t)
	p := awsWorld(t)
	bb := coreBucket(t, entryConfig)
	waitBucket(t, bb.Name, 2*time.Minute, "Succeeded", bucketSucceeded)
	operator := p.storeFor(t, p.operator())
	gone, kept := newShoot(t), newShoot(t)
	core := coreEntry(t, gone, "", bb.Name, seedA, nil)
	coreEntry(t, kept, "", bb.Name, seedA, nil)
	for _, s := range []shoot{gone, kept} {
		waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded", entrySucceeded(""))
		framework.FillEntry(t, operator, bb.Name, s.entryName()+"/", 3)
	}
	all, err := conformance.ListKeys(ctx(), operator, bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	// What the deletion of gone must leave: everything but its prefix (its look-alike
	// neighbours included).
	keptKeys := slices.DeleteFunc(slices.Clone(all), func(k string) bool { return strings.HasPrefix(k, gone.entryName()+"/") })
	if len(keptKeys) == len(all) {
		t.Fatalf("no object under %s/ before its deletion: %v", gone.entryName(), all)
	}
	if got := bucketPrincipals(t, bb.Name); len(got) != 2 {
		t.Fatalf("MinIO service accounts of the bucket: %v; want the two entries'", got)
	}
	setCoreProviderConfig(t, bb, entryHandBackAlone)
	waitHandBack(t, bb.Name, 2*time.Minute, backupbucket.ReasonHandBackSettings, "remove entryCredentials")

	// Each entry reconciled while the hand-back waits keeps the finalizer.
	for _, s := range []shoot{gone, kept} {
		ext := &extensionsv1alpha1.BackupEntry{}
		if err := seed.Get(ctx(), client.ObjectKey{Name: s.entryName()}, ext); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(ext.DeepCopy())
		metav1.SetMetaDataAnnotation(&ext.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationReconcile)
		if err := seed.Patch(ctx(), ext, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "entry "+s.entryName()+" reconciled while the hand-back waits", func() (bool, string) {
			cur := &extensionsv1alpha1.BackupEntry{}
			if err := seed.Get(ctx(), client.ObjectKey{Name: s.entryName()}, cur); err != nil {
				return false, err.Error()
			}
			_, pending := cur.Annotations[v1beta1constants.GardenerOperation]
			return !pending && cur.Status.LastOperation != nil && cur.Status.LastOperation.State == "Succeeded", framework.Describe(cur)
		})
		if !heldByUs(t, s.entryName()) {
			t.Errorf("entry %s reconciled while the hand-back waits dropped this extension's finalizer", s.entryName())
		}
	}

	// An entry deleted while the hand-back waits is deleted by this extension.
	entry := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: gone.entryName()}}
	if err := garden.Delete(ctx(), core); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, core, 2*time.Minute, "gardenlet finishes the core BackupEntry's deletion")
	waitGone(t, seed, entry, 10*time.Second, "the extension BackupEntry is gone")
	framework.AssertOnly(t, operator, bb.Name, keptKeys)
	if got := bucketPrincipals(t, bb.Name); len(got) != 1 {
		t.Errorf("MinIO service accounts of the bucket after the deletion: %v; want the kept entry's alone", got)
	}
	if c := v1beta1helper.GetCondition(extensionBucket(t, bb.Name).Status.Conditions, backupbucket.ConditionHandBack); c == nil || c.Reason != backupbucket.ReasonHandBackSettings {
		t.Errorf("condition HandBack after the deletion: %+v; want it still waiting for the settings", c)
	}
}
