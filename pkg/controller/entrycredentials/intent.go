// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"
	"maps"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// The intent (entryrecord.Intent, kept on the BackupEntry: entryrecord.Kept) records what the
// etcd-backup secret's record is to say once gardener's actuator has written the data a pass
// decided: that write resets the secret's annotations, and a restart before the pass records
// anew (the SettleRecord step) would leave a rotated-out credential neither retiring nor on any
// record, and one to revoke unrevoked. The pass writes it before the secret (only when something
// changes hands or is still to be revoked or retired) and removes it once the secret's record
// says the same; the next pass takes it up when the secret has no record of the entry
// (Decide).

// intentOf is be's intent (nil: none, or not one).
func intentOf(be *extensionsv1alpha1.BackupEntry) *entryrecord.Intent {
	return entryrecord.ReadKept(be.Annotations).Intent
}

// writeIntent records on be what o is about to hand over, before gardener's actuator writes
// the secret; nothing when nothing changes hands or is pending, or the same is on record.
func (c *Credentials) writeIntent(ctx context.Context, be *extensionsv1alpha1.BackupEntry, o *Outcome) error {
	if !o.issued && len(o.revoke) == 0 && o.retire == nil {
		return nil
	}
	in := &entryrecord.Intent{Published: o.published, Retire: o.retire, Revoke: o.revoke}
	if o.rotation != nil {
		in.Rotation, in.Request = o.rotation.Reason, o.rotation.Request
	}
	return c.patchIntent(ctx, be, in)
}

// clearIntent removes the intent from be once the secret's record says it (and what an earlier
// build kept on be, in its form).
func (c *Credentials) clearIntent(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return c.patchIntent(ctx, be, nil)
}

// patchIntent keeps in (nil: none) as be's intent; nothing is written when be keeps that already.
func (c *Credentials) patchIntent(ctx context.Context, be *extensionsv1alpha1.BackupEntry, in *entryrecord.Intent) error {
	base := be.DeepCopy()
	kept := entryrecord.ReadKept(be.Annotations)
	kept.Intent = in
	annotations := maps.Clone(be.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if !entryrecord.WriteKept(annotations, kept) {
		return nil
	}
	if c.client == nil {
		return fmt.Errorf("the entry's credential record cannot be kept across a restart: the BackupEntry controller has no client to write it")
	}
	be.Annotations = annotations
	if err := c.client.Patch(ctx, be, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording on the BackupEntry what its etcd-backup secret is to hold (annotation %s): %w", entryrecord.AnnotationEntryCredentialKept, err)
	}
	return nil
}
