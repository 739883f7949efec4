// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Rehearse takes be's inventory with the entry's credentials and judges it as BackupsFresh would
// at now (the same locate, listing, thresholds and judge), read with reader and written nowhere:
// no condition, no provider status, no metric series of the entry. A listing that fails is
// Unknown/InventoryFailed with its cause, never a verdict.
func Rehearse(ctx context.Context, p provider.Provider, reader client.Reader, opts Options, be *extensionsv1alpha1.BackupEntry, now time.Time) (inventory.Inventory, inventory.Verdict) {
	c := &inventoryTaker{Deps: periodic.Deps{Provider: p, Reader: reader}, opts: opts}
	unknown := func(reason, format string, args ...any) inventory.Verdict {
		return inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	thresholds, err := c.thresholdsOf(be)
	if err != nil {
		return inventory.Inventory{}, unknown(ReasonSeedConfigPending, "The backups are not judged: %v.", err)
	}
	loc, err := entryinfo.LocateEntry(ctx, reader, be)
	if err != nil {
		return inventory.Inventory{}, unknown(ReasonInventoryFailed, "Where the entry's snapshots live cannot be told: %v.", err)
	}
	st, err := c.writtenOf(ctx, be)
	if err != nil {
		return inventory.Inventory{}, unknown(ReasonInventoryFailed, "Which bucket the shoot writes cannot be told: %v.", err)
	}
	inv, _, _, err := c.take(ctx, st, loc.Prefix, now)
	if err != nil {
		return inv, unknown(ReasonInventoryFailed, "Counting the objects under the entry's prefix failed: %v.", err)
	}
	return inv, c.judge(ctx, be, &inv, thresholds, now)
}
