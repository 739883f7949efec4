// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func (b *bench) phase2(ctx context.Context) error {
	if err := b.phase2a(ctx); err != nil {
		return err
	}
	if b.c.inventoryInterval <= 0 {
		return nil
	}
	return b.phase2b(ctx)
}

// phase2a is gardenlet's resync: the reconcile annotation on the bucket and every entry at
// once, as a gardenlet restarting without syncJitterPeriod (or every sync period) sends it.
func (b *bench) phase2a(ctx context.Context) error {
	c := b.c
	n := float64(c.entries)
	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	mark := b.mark()
	progress("phase 2a: annotating the bucket and %d entries with gardener.cloud/operation=reconcile at once", c.entries)
	t0 := time.Now()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}}}`))
	if err := b.k8s.Patch(ctx, &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucketName}}, patch); err != nil {
		return err
	}
	if err := b.parallel(c.entries, func(i int) error {
		return b.k8s.Patch(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryName(i)}}, patch)
	}); err != nil {
		return err
	}
	if err := b.waitFor(ctx, "entries reconciled (annotation gone, Succeeded)", b.countEntries(ctx, c.entries, func(be *extensionsv1alpha1.BackupEntry) bool {
		_, annotated := be.Annotations[v1beta1constants.GardenerOperation]
		return !annotated && succeeded(be)
	})); err != nil {
		return err
	}
	elapsed := time.Since(t0)
	time.Sleep(2 * time.Second) // the last calls' metrics
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	hits := b.since(mark)
	fmt.Printf("\n## Phase 2a: a resync of %d unchanged entries and their bucket (the reconcile annotation on all at once)\n", c.entries)
	fmt.Printf("all reconciled %.1f s after the first annotation\n", elapsed.Seconds())
	printAPI(before.metrics, after.metrics, n)
	printAPIServer(before, after, n)
	printCloud(before.metrics, after.metrics, hits, n)
	fmt.Println("cloud requests (proxy) per 5 s from the first annotation:")
	histogram(hits, t0)
	b.printFresh(ctx)
	return nil
}

// phase2b is the extension's own periodic work: a restart with --entry-inventory-interval,
// watched for the start-up and one period (plus its 10% jitter) after it.
func (b *bench) phase2b(ctx context.Context) error {
	c := b.c
	n := float64(c.entries)
	progress("phase 2b: restarting the extension with --entry-inventory-interval %s and watching %s", c.inventoryInterval, c.inventoryInterval*23/10)
	b.stopExtensions()
	mark := b.mark()
	t0 := time.Now()
	if err := b.startExtensions(ctx, "--entry-inventory-interval", c.inventoryInterval.String()); err != nil {
		return err
	}
	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	time.Sleep(c.inventoryInterval * 23 / 10)
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	hits := b.since(mark)
	fmt.Printf("\n## Phase 2b: restart, then the extension's own periodic work (--entry-inventory-interval %s) for %s\n", c.inventoryInterval, c.inventoryInterval*23/10)
	printAPI(before.metrics, after.metrics, n)
	printAPIServer(before, after, n)
	printCloud(before.metrics, after.metrics, hits, n)
	if len(b.reps) == 1 {
		fmt.Printf("extension RSS: peak (VmHWM) %.0f MiB since the restart\n", after.procs[b.reps[0].name].PeakRSSMiB)
	} else {
		b.printRSS(after, " since the restart")
	}
	fmt.Println("cloud requests (proxy) per 5 s from the restart:")
	histogram(hits, t0)
	b.printFresh(ctx)
	return nil
}
