// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// place is where an entry's backups are, as its spec names them now: what an inventory counts.
type place struct{ bucket, region, prefix string }

// placeOf is where the entry's snapshots are now: st's bucket and region, loc's prefix.
func placeOf(st written, loc entryinfo.Location) place {
	return place{bucket: st.bucket, region: st.region, prefix: loc.Prefix.String()}
}

// written is the store the entry's shoot writes its snapshots to now, and the credentials that
// read it: the entry's bucket with its spec's credentials, or the copy bucket with the copy's
// while the entry serves the copy.
type written struct {
	bucket, region string
	secret         corev1.SecretReference
	provider       provider.Provider
}

// writtenOf is where be's shoot writes now: the copy bucket (connect.CopyPlace) while the shoot
// writes it (connect.Served.WritesCopy, whatever the plan: its Etcd names the copy bucket and its
// etcd-backup holds the copy's credentials, as the entry copy's pause and passes decide; so also
// while coming back until gardenlet rolls the Etcd onto the entry's bucket); else the entry's own
// bucket.
func (c *inventoryTaker) writtenOf(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (written, error) {
	own := written{bucket: be.Spec.BucketName, region: be.Spec.Region, secret: be.Spec.SecretRef, provider: c.Provider}
	if cfg, _ := connect.EntryConfig(c.Provider, be); cfg.CopySettings() == nil {
		return own, nil
	}
	served, err := connect.ServedOf(ctx, c.Reader, c.Provider, be)
	if err != nil || !served.WritesCopy {
		return own, err
	}
	copyPlace := served.Place
	return written{bucket: copyPlace.Bucket, region: copyPlace.Region, secret: copyPlace.Secret, provider: copyPlace.Provider}, nil
}

// counts reports whether inv is a count of p. An inventory of an earlier version, which does not
// record its place (or its prefix), is taken for one of p (for a garden's entry, whose earlier
// inventories counted `<entry>/`, a verdict other than True is listed anew within minRecount);
// the next count records it.
func (p place) counts(inv *inventory.Inventory) bool {
	if inv.Bucket == "" && inv.Region == "" {
		return true
	}
	return inv.Bucket == p.bucket && inv.Region == p.region && (inv.Prefix == "" || inv.Prefix == p.prefix)
}

// String names the bucket and region (the prefix an inventory counted is in the status beside
// it: inventory.Inventory.Prefix).
func (p place) String() string {
	if p.region == "" {
		return fmt.Sprintf("bucket %q", p.bucket)
	}
	return fmt.Sprintf("bucket %q in region %q", p.bucket, p.region)
}

// placeOfInventory is the place inv was counted in.
func placeOfInventory(inv *inventory.Inventory) place {
	return place{bucket: inv.Bucket, region: inv.Region, prefix: inv.Prefix}
}

// publishRecount says that the entry moved (from the place of its last inventory, when known)
// and its new place is not counted yet: because its listing failed (err), or because the entry's
// reconcile is not done. It drops the old place's inventory and metrics.
func (c *inventoryTaker) publishRecount(ctx context.Context, be *extensionsv1alpha1.BackupEntry, from *place, to place, err error) error {
	msg := fmt.Sprintf("The entry now uses %s", to)
	if from != nil {
		msg = fmt.Sprintf("The entry moved from %s to %s: the last inventory, of %s, no longer applies", from, to, from)
	}
	if err != nil {
		msg += fmt.Sprintf("; counting %s failed: %v. Retrying in a minute.", to, err)
	} else {
		msg += fmt.Sprintf("; %s is counted when the entry's reconcile succeeds.", to)
	}
	metrics.ForgetEntry(be.Name)
	return c.publish(ctx, be, nil, true, inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonRecounting, Message: msg})
}
