// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createBucket creates the one bucket and waits for it Succeeded.
func (b *bench) createBucket(ctx context.Context) error {
	ref := corev1.SecretReference{Namespace: "garden", Name: "bucket-" + bucketName}
	if err := b.k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Data: b.secretData()}); err != nil {
		return err
	}
	if err := b.k8s.Create(ctx, &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucketName, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws", ProviderConfig: &runtime.RawExtension{Raw: []byte(bucketConfig)}},
			Region:      b.minio.Region, SecretRef: ref,
		},
	}); err != nil {
		return err
	}
	return b.waitFor(ctx, "bucket", func() (int, int, error) {
		bb := &extensionsv1alpha1.BackupBucket{}
		if err := b.k8s.Get(ctx, client.ObjectKey{Name: bucketName}, bb); err != nil {
			return 0, 1, err
		}
		if succeeded(bb) {
			return 1, 1, nil
		}
		return 0, 1, nil
	})
}

// prepare creates what gardenlet has before entries [from, to): shoot namespaces, Clusters and
// entry secrets, and (--snapshots) a fresh full snapshot under each entry's prefix.
func (b *bench) prepare(ctx context.Context, from, to int) error {
	data := b.secretData()
	if err := b.parallel(to-from, func(j int) error {
		i := from + j
		ns := shootNamespace(i)
		if err := b.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
		if err := b.k8s.Create(ctx, &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{}`)},
			Seed:         &runtime.RawExtension{Raw: []byte(`{}`)},
			Shoot:        runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","spec":{"hibernation":{"enabled":false}},"status":{"isHibernated":false}}`)},
		}}); err != nil {
			return err
		}
		return b.k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "entry-" + entryName(i)}, Data: data})
	}); err != nil {
		return err
	}
	if !b.c.snapshots {
		return nil
	}
	// One full snapshot, taken now, as etcd-backup-restore names it (pkg/inventory/name.go):
	// the inventory then finds a fresh full (and newest) snapshot and judges BackupsFresh True.
	now := time.Now().Unix()
	return b.seed(ctx, "snapshots", to-from, func(j int) string {
		return fmt.Sprintf("%s/etcd-main/v2/Full-00000000-00000001-%d.gz", entryName(from+j), now)
	})
}

// createEntries creates the BackupEntries [from, to) at once.
func (b *bench) createEntries(ctx context.Context, from, to int) error {
	return b.parallel(to-from, func(j int) error {
		i := from + j
		return b.k8s.Create(ctx, &extensionsv1alpha1.BackupEntry{
			ObjectMeta: metav1.ObjectMeta{Name: entryName(i), Annotations: operationReconcile},
			Spec: extensionsv1alpha1.BackupEntrySpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"},
				Region:      b.minio.Region, BucketName: bucketName,
				SecretRef: corev1.SecretReference{Namespace: "garden", Name: "entry-" + entryName(i)},
			},
		})
	})
}

func (b *bench) phase1(ctx context.Context) error {
	c := b.c
	if err := b.createBucket(ctx); err != nil {
		return err
	}
	progress("bucket Succeeded; creating %d shoot namespaces, Clusters and entry secrets (as gardenlet has them before the entries), snapshots %v", c.entries, c.snapshots)
	t := time.Now()
	if err := b.prepare(ctx, 0, c.entries); err != nil {
		return err
	}
	progress("  done in %s", time.Since(t).Round(time.Second))

	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	mark := b.mark()
	stopSampler := b.sampleCPU(ctx)
	progress("phase 1: creating %d BackupEntries at once (%d client workers)", c.entries, c.workers)
	t0 := time.Now()
	if err := b.createEntries(ctx, 0, c.entries); err != nil {
		return err
	}
	created := time.Since(t0)
	progress("  created in %s; waiting for all Succeeded", created.Round(100*time.Millisecond))
	count := b.countEntries(ctx, c.entries, func(be *extensionsv1alpha1.BackupEntry) bool { return succeeded(be) })
	// The CPU profiles start once about 10% are Succeeded: in the middle of the work, not its
	// start-up.
	var cpuDone func() []profile
	waitErr := b.waitFor(ctx, "entries Succeeded", func() (int, int, error) {
		done, total, err := count()
		if cpuDone == nil && err == nil && done >= max(1, total/10) {
			if r := b.leader(ctx); r != nil {
				progress("  %d of %d Succeeded: taking 20 s CPU profiles of %s and kube-apiserver", done, total, r.name)
				cpuDone = b.cpuProfiles(ctx, r, "phase1")
			}
		}
		return done, total, err
	})
	elapsed := time.Since(t0)
	if waitErr != nil && ctx.Err() != nil {
		return waitErr
	}
	busiest := stopSampler()
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	var profiles []profile
	if r := b.leader(ctx); r != nil {
		profiles = append(profiles, b.heapProfile(ctx, r, "phase1"))
	}
	if cpuDone != nil {
		profiles = append(profiles, cpuDone()...)
	}
	n := float64(c.entries)
	fmt.Printf("\n## Phase 1: %d BackupEntries created at once\n", c.entries)
	if waitErr != nil { // timed out: report what there is, per entry created
		done, _, _ := count()
		fmt.Printf("NOT all Succeeded: %d of %d after %.1f s (--timeout): %.2f entries/s; the figures below are per entry created\n", done, c.entries, elapsed.Seconds(), float64(done)/elapsed.Seconds())
	} else {
		fmt.Printf("all Succeeded %.1f s after the first create (creating took %.1f s): %.2f entries/s\n", elapsed.Seconds(), created.Seconds(), n/elapsed.Seconds())
	}
	b.printRSS(after, "")
	printAPI(before.metrics, after.metrics, n)
	printAPIServer(before, after, n)
	printCloud(before.metrics, after.metrics, b.since(mark), n)
	printCPU(before, after, busiest)
	b.printFresh(ctx)
	for _, p := range profiles {
		p.print()
	}
	return waitErr
}
