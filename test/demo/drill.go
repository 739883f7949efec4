// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"os"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// drillInterval is the demo's --restore-drill-interval (24h by default): an entry's slot falls
// within one interval, so the first drill comes within seconds, and a drill after the last
// snapshot covers the whole chain.
const drillInterval = "5s"

// drillFlags are the extension's restore drill flags in the demo, with the scratch directory made.
func drillFlags(scratch string) ([]string, error) {
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	return []string{"--restore-drill-interval", drillInterval, "--restore-drill-scratch-dir", scratch}, nil
}

// showDrill waits until the extension's restore drill restored the entry's newest snapshot
// (BackupsRestorable True at the newest snapshot's last revision) and prints what it proved.
func showDrill(ctx context.Context, k8s client.Client, be *extensionsv1alpha1.BackupEntry, snapshots []string) error {
	say("Restore drill: the extension restores the entry's newest backup itself (--restore-drill-interval %s here; 24h by default)", drillInterval)
	var want int64
	for _, k := range snapshots {
		if end, _, ok := stack.SnapshotEndRevision(k); ok && end > want {
			want = end
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil {
			return err
		}
		cond := v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable)
		ps, err := entryinfo.ReadProviderStatus(be)
		if err != nil {
			return err
		}
		if cond != nil && cond.Status == gardencorev1beta1.ConditionTrue && ps.Drill != nil && len(ps.Drill.Etcds) == 1 && ps.Drill.Etcds[0].Revision == want {
			detail("BackupEntry %s: %s=%s (%s) %s", be.Name, cond.Type, cond.Status, cond.Reason, cond.Message)
			for _, e := range ps.Drill.Etcds {
				detail("  %s restored to revision %d (%d keys) from full snapshot %s and %d deltas; %d of %d bytes read in %s",
					e.Name, e.Revision, e.Keys, e.FullSnapshot, e.Deltas, e.BytesRead, e.Size, e.Duration.Round(time.Millisecond))
			}
			return nil
		}
		if time.Now().After(deadline) {
			status := "no condition"
			if cond != nil {
				status = fmt.Sprintf("%s (%s) %s", cond.Status, cond.Reason, cond.Message)
			}
			return fmt.Errorf("no restore drill of %s reached revision %d within 2 minutes: BackupsRestorable %s", be.Name, want, status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
