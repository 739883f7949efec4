// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"fmt"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// lockedConfig is the aws source bucket of TestProviders' migration there and back: Object Lock with a governance
// default retention of a day (MinIO's shortest) and MinIO-issued generated credentials, which
// may not write lifecycle rules (their policy: pkg/provider/aws/issuer.go). Keys sorted at every
// level (see bucketConfig).
const lockedConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],` +
	`"generatedCredentials":{"issuer":"MinIO","rotation":{"gracePeriod":"10s"}},` +
	`"immutability":{"mode":"governance","retentionPeriod":"24h","retentionType":"bucket"},"kind":"BackupBucketConfig"}`

// thereAndBack is a shoot's control plane migration from the provider's seed a to seed b and
// back, between two seeds with two buckets, each BackupBucket only on its own seed, the way
// gardener does it (see TestControlPlaneMigration for the steps and where gardener takes them),
// with the real etcd-backup-restore writing the shoot's snapshots before, during and after:
//
//   - the source bucket (seed a) has sourceConfig: with locks where the store has them (aws:
//     Object Lock and MinIO generated credentials; gcp: a retention policy of a day; azure: a
//     container immutability policy of a day), so that the entry's snapshots written on seed a
//     are locked for a day;
//   - on seed b, the "source-" entry names the source bucket, whose BackupBucket seed b does not
//     have; after the copy, its force-deletion meets the locked snapshots and must finish with
//     their deletion deferred to the store (issue 25, finding 4: the entry's generated
//     credentials cannot write the rule, and the fallback to the bucket's credentials finds no
//     BackupBucket on seed b; p.sourceLeftDeferred, where set, checks what it left);
//   - back on seed a, the entry's prefix in the source bucket is in use again: no lifecycle rule
//     may expire the snapshots written now (issue 25, finding 1; p.liveNotExpired).
//
// At the end every snapshot written before, during and after is in the source bucket, and the
// newest restores with every key etcd ever held. etcd-druid's copy job is stood in for by the
// test: it copies the snapshot objects with the source-etcd-backup and etcd-backup secrets
// gardenlet wrote on the target seed.
func thereAndBack(t *testing.T, p *providerWorld, sourceConfig string) {
	a, b := p.a, p.b
	source := coreBucketFor(t, p.typ, p.region, p.operator(), a.name, sourceConfig)
	target := coreBucketFor(t, p.typ, p.region, p.operator(), b.name, p.bucketConfig)
	waitBucket(t, source.Name, 3*time.Minute, "Succeeded on "+a.name, bucketSucceeded)
	waitBucket(t, target.Name, 2*time.Minute, "Succeeded on "+b.name, bucketSucceeded)
	for bucket, other := range map[string]*seedWorld{source.Name: b, target.Name: a} {
		if err := other.client.Get(ctx(), client.ObjectKey{Name: bucket}, &extensionsv1alpha1.BackupBucket{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the extension BackupBucket %s exists on %s too (%v): each bucket must live on its own seed only", bucket, other.name, err)
		}
	}

	s := newShootOn(t, a.client)
	coreEntry(t, s, "", source.Name, a.name, nil)
	waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded on "+a.name, entrySucceeded(""))
	etcdBackup := secretData(t, a.client, s.technicalID(), "etcd-backup")
	if got := string(etcdBackup["bucketName"]); got != source.Name {
		t.Fatalf("etcd-backup names bucket %q; want %q", got, source.Name)
	}
	h := &etcdHistory{storeFor: p.storeFor, consumer: p.consumer, entry: s.entryName(), want: map[string]string{}, snapshots: map[string]string{}}
	h.run(t, "before", etcdBackup, "")

	// There: a -> b.
	src, sourceBackup, etcdBackup := migrate(t, s, a, b, source.Name, target.Name)
	copyBackups(t, p.storeFor, sourceBackup, etcdBackup, h.entry)
	h.run(t, "during", etcdBackup, h.restore(t, etcdBackup))
	// Finding 4: the source entry on b meets the locked snapshots of "before".
	forceDeleteSource(t, b, s, src)
	left := currentKeys(t, p.storeFor(t, p.operator()), source.Name, h.entry+"/")
	t.Logf("after the source entry's deletion, %d objects are left under %s/ in bucket %s (locked ones: their deletion deferred to the store): %v", len(left), h.entry, source.Name, left)
	if p.sourceLeftDeferred != nil && sourceConfig == p.lockedConfig {
		p.sourceLeftDeferred(t, source.Name, left)
	}

	// And back: b -> a, onto the source bucket again.
	src, sourceBackup, etcdBackup = migrate(t, s, b, a, target.Name, source.Name)
	copyBackups(t, p.storeFor, sourceBackup, etcdBackup, h.entry)
	afterFrom := len(h.snapshots)
	h.run(t, "after", etcdBackup, h.restore(t, etcdBackup))
	forceDeleteSource(t, a, s, src)
	if len(h.snapshots) == afterFrom {
		t.Fatal("no snapshot was written after the migration back")
	}

	// Every snapshot is there, in the bucket the entry uses now.
	current := currentKeys(t, p.storeFor(t, p.operator()), source.Name, h.entry+"/etcd-main/")
	var after []string
	for key, phase := range h.snapshots {
		if !contains(current, key) {
			t.Errorf("the snapshot %s written %s the migrations is not in bucket %s at the end", key, phase, source.Name)
		}
		if phase == "after" {
			after = append(after, key)
		}
	}
	// The newest restores, with every key.
	db := startEtcdOn(t, h.restore(t, etcdBackup))
	for k, v := range h.want {
		if got := db.Get(t, k); got != v {
			t.Errorf("etcd restored at the end from bucket %s: %s = %q; want %q", source.Name, k, got, v)
		}
	}
	db.Stop()
	// Finding 1: nothing of ours expires what the live entry writes now (last: on gcp it runs the
	// bucket's lifecycle, which deletes what it matches).
	if p.liveNotExpired != nil {
		p.liveNotExpired(t, source.Name, after)
	} else {
		t.Logf("no lifecycle check: %s", p.noLifecycle)
	}
	t.Logf("snapshots kept across %s -> %s -> %s: %d (before, during and after); restored with %d keys", a.name, b.name, a.name, len(h.snapshots), len(h.want))
}

// migrate moves the shoot's entry from one seed to the other as gardener does (see
// TestControlPlaneMigration): migrate on from, then on to the source entry on fromBucket and the
// restore onto toBucket. It returns the source entry (not yet deleted) and the secrets gardenlet
// wrote on to: source-etcd-backup and etcd-backup.
func migrate(t *testing.T, s shoot, from, to *seedWorld, fromBucket, toBucket string) (src *gardencorev1beta1.BackupEntry, sourceBackup, etcdBackup map[string][]byte) {
	t.Helper()
	what := from.name + " -> " + to.name
	patchEntry(t, s.entryKey(), func(be *gardencorev1beta1.BackupEntry) { be.Spec.SeedName = new(to.name) })
	waitEntry(t, s.entryKey(), 2*time.Minute, what+": Migrate Succeeded with status.seedName cleared", func(be *gardencorev1beta1.BackupEntry) bool {
		return entrySucceeded(gardencorev1beta1.LastOperationTypeMigrate)(be) && be.Status.SeedName == nil
	})
	waitGone(t, from.client, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: s.entryName()}}, 10*time.Second, what+": the migrated extension BackupEntry is gone from "+from.name)
	// gardener deletes the shoot's namespace on the source seed (not the extension).
	if err := from.client.Delete(ctx(), secretKey(s.technicalID(), "etcd-backup")); err != nil {
		t.Fatalf("%s: the migration left no etcd-backup on %s to remove (%v)", what, from.name, err)
	}
	s.placeOn(t, to.client)

	src = coreEntry(t, s, v1beta1constants.BackupSourcePrefix+"-", fromBucket, to.name,
		map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile})
	waitEntry(t, client.ObjectKeyFromObject(src), 2*time.Minute, what+": the source entry Succeeded on "+to.name, entrySucceeded(""))
	sourceBackup = secretData(t, to.client, s.technicalID(), "source-etcd-backup")
	if got := string(sourceBackup["bucketName"]); got != fromBucket {
		t.Fatalf("%s: source-etcd-backup names bucket %q; want %q", what, got, fromBucket)
	}

	patchEntry(t, s.entryKey(), func(be *gardencorev1beta1.BackupEntry) {
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationRestore)
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, v1beta1constants.GardenerTimestamp, time.Now().UTC().Format(time.RFC3339Nano))
		be.Spec.BucketName = toBucket
		be.Spec.SeedName = new(to.name)
	})
	waitEntry(t, s.entryKey(), 2*time.Minute, what+": Restore Succeeded on "+to.name, func(be *gardencorev1beta1.BackupEntry) bool {
		succeeded := entrySucceeded(gardencorev1beta1.LastOperationTypeRestore)(be) || entrySucceeded(gardencorev1beta1.LastOperationTypeReconcile)(be)
		return succeeded && !hasOperationAnnotation(be) && ptr.Deref(be.Status.SeedName, "") == to.name && be.Spec.BucketName == toBucket
	})
	etcdBackup = secretData(t, to.client, s.technicalID(), "etcd-backup")
	if got := string(etcdBackup["bucketName"]); got != toBucket {
		t.Fatalf("%s: the restored etcd-backup names bucket %q; want %q", what, got, toBucket)
	}
	return src, sourceBackup, etcdBackup
}

// forceDeleteSource force-deletes the source entry after the copy, as the shoot flow does, and
// waits until gardenlet on w has finished its deletion.
func forceDeleteSource(t *testing.T, w *seedWorld, s shoot, src *gardencorev1beta1.BackupEntry) {
	t.Helper()
	patchEntry(t, client.ObjectKeyFromObject(src), func(be *gardencorev1beta1.BackupEntry) {
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, gardencorev1beta1.BackupEntryForceDeletion, "true")
	})
	if err := garden.Delete(ctx(), src); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "gardenlet on "+w.name+" finishes deleting the source entry "+src.Name+" (bucket "+src.Spec.BucketName+")", func() (bool, string) {
		be := &gardencorev1beta1.BackupEntry{}
		err := garden.Get(ctx(), client.ObjectKeyFromObject(src), be)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		ext := &extensionsv1alpha1.BackupEntry{}
		state := "; no extension BackupEntry on " + w.name
		if w.client.Get(ctx(), client.ObjectKey{Name: src.Name}, ext) == nil {
			state = fmt.Sprintf("; extension BackupEntry on %s: %s finalizers %v", w.name, framework.Describe(ext), ext.Finalizers)
		}
		return false, describe(be.Status.LastOperation, be.Status.LastError, be.Generation, be.Status.ObservedGeneration) + state
	})
	waitGone(t, w.client, secretKey(s.technicalID(), "source-etcd-backup"), 10*time.Second, "source-etcd-backup is gone from "+w.name)
}
