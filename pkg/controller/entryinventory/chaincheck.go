// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"reflect"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// teeListing hands every page the inventory lists to a drill.Collector too: the cheap check of
// the snapshot chains by names costs no request of its own.
type teeListing struct {
	objectstore.DataPlane

	chains *drill.Collector
}

func (t teeListing) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return t.DataPlane.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		t.chains.Add(page)
		return fn(page)
	})
}

// publishChains writes the cheap check's findings to status.providerStatus.chains when they
// differ from what is there (nil findings remove it): one write when a chain breaks or heals,
// none while nothing changes. The restore drill's controller reports them (BackupsRestorable).
func (c *inventoryTaker) publishChains(ctx context.Context, be *extensionsv1alpha1.BackupEntry, findings []drill.ChainFinding, now time.Time) error {
	err := extstatus.Patch(ctx, c.Client, c.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		ps, err := entryinfo.ReadProviderStatus(be)
		var had []drill.ChainFinding
		if err == nil && ps.Chains != nil {
			had = ps.Chains.Findings
		}
		if reflect.DeepEqual(had, findings) {
			return false
		}
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) {
			ps.Chains = nil
			if len(findings) > 0 {
				ps.Chains = &drill.ChainCheck{CheckedAt: metav1.NewTime(now), Findings: findings}
			}
		})
		return true
	})
	if err != nil {
		return fmt.Errorf("publishing the chain check of BackupEntry %s: %w", be.Name, err)
	}
	return nil
}
