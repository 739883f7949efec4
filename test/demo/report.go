// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// report waits until the entry's inventory counts the objects written and prints the bucket's
// and the entry's conditions and the inventory, as an operator reads them with kubectl.
func report(ctx context.Context, k8s client.Client, metricsURL string, bb *extensionsv1alpha1.BackupBucket, be *extensionsv1alpha1.BackupEntry, objects int) error {
	say("Conditions and inventory (the probe and the inventory run every 2s here; 5m and 30m by default)")
	deadline := time.Now().Add(time.Minute)
	var ps entryinfo.ProviderStatus
	for {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil {
			return err
		}
		var err error
		if ps, err = entryinfo.ReadProviderStatus(be); err != nil {
			return err
		}
		fresh := v1beta1helper.GetCondition(be.Status.Conditions, entryinventory.ConditionBackupsFresh)
		if ps.Inventory != nil && ps.Inventory.Objects == int64(objects) && fresh != nil && fresh.Status != gardencorev1beta1.ConditionUnknown {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the inventory of %s did not count the %d objects within a minute: %+v", be.Name, objects, ps.Inventory)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		return err
	}
	for _, c := range []struct {
		obj  string
		list []gardencorev1beta1.Condition
		t    gardencorev1beta1.ConditionType
	}{
		{"BackupBucket " + bb.Name, bb.Status.Conditions, backupbucket.ConditionBucketAvailable},
		{"BackupEntry " + be.Name, be.Status.Conditions, entryinventory.ConditionBackupsFresh},
	} {
		cond := v1beta1helper.GetCondition(c.list, c.t)
		if cond == nil {
			return fmt.Errorf("%s has no %s condition", c.obj, c.t)
		}
		detail("%s: %s=%s (%s) %s", c.obj, c.t, cond.Status, cond.Reason, cond.Message)
	}
	inv := ps.Inventory
	detail("inventory of %s/ counted at %s: %d objects, %d versions, %d bytes, %d under retention, %d listing pages",
		be.Name, inv.CountedAt.UTC().Format(time.RFC3339), inv.Objects, inv.Versions, inv.Bytes, inv.UnderRetention, inv.Pages)
	for _, etcd := range inv.Etcds {
		for _, s := range []struct {
			kind string
			snap *inventory.Snapshot
		}{{"full", etcd.LatestFull}, {"delta", etcd.LatestDelta}} {
			if s.snap == nil {
				detail("  %s: no %s snapshot", etcd.Name, s.kind)
				continue
			}
			detail("  %s newest %s snapshot: %s (taken %s)", etcd.Name, s.kind, s.snap.Key, s.snap.Time.UTC().Format(time.RFC3339))
		}
	}
	body, err := stack.Get(ctx, metricsURL)
	if err != nil {
		return err
	}
	detail("the extension's own metrics now (histograms as their counts):")
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "gardener_backup_") && !strings.Contains(line, "_bucket{") && !strings.Contains(line, "_sum") {
			detail("  %s", line)
		}
	}
	return nil
}
