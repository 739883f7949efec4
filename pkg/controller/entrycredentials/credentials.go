// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Credentials gives the BackupEntries of one provider their own credentials: each reconcile or
// restore pass observes, decides (Decide) and executes before gardener's generic actuator writes
// the etcd-backup secret (Data), and settles after it (Settle); Migrate retires the credential
// left behind (RetireMigrated), a deletion revokes them all (KeepForDeletion, RevokeDeleted).
// It keeps nothing of a pass: each has its Outcome.
type Credentials struct {
	provider provider.Provider
	// reader reads from the API server (secrets, the BackupBucket: never a cache that has not
	// seen a change yet).
	reader client.Reader
	// client writes the entry's record, its intent, its condition and its rotation request.
	client   client.Client
	recorder events.EventRecorder
}

// New returns the entry credentials of p's BackupEntries; c may be nil where nothing is written
// (the rehearsal).
func New(p provider.Provider, reader client.Reader, c client.Client, recorder events.EventRecorder) *Credentials {
	return &Credentials{provider: p, reader: reader, client: c, recorder: recorder}
}

// Data returns the data the etcd-backup secret is to hold (bucketData, the bucket's credential as
// the provider made it from entryData, or the entry's own), deciding into o; what changes hands
// is recorded on the entry before gardener's actuator writes it (the intent).
func (c *Credentials) Data(ctx context.Context, be *extensionsv1alpha1.BackupEntry, o *Outcome, entryData, bucketData map[string][]byte) (map[string][]byte, error) {
	out, err := c.entryCredentialData(ctx, be, o, entryData, bucketData)
	if err != nil {
		return nil, err
	}
	if err := c.writeIntent(ctx, be, o); err != nil {
		o.revoke, o.retire, o.err = nil, nil, err // nothing is written: nothing changes hands
		return nil, err
	}
	return out, nil
}

// Settle finishes a reconcile or restore pass whose etcd-backup secret gardener's actuator wrote
// (passErr nil) or did not: the record, revocations, retirements, the condition and the metric
// (settleEntryCredential). It returns passErr, or the first error of its own.
func (c *Credentials) Settle(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome, passErr error) error {
	return c.settleEntryCredential(ctx, log, be, o, passErr)
}

// RetireMigrated lets the entry's own credential, which a Migrate leaves behind on this seed, stay
// valid for the migration grace period, then end.
func (c *Credentials) RetireMigrated(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return lasterror.For(c.retireMigratedEntryCredential(ctx, be))
}

// KeepForDeletion keeps the etcd-backup secret's record on the entry before gardener's actuator
// deletes the secret.
func (c *Credentials) KeepForDeletion(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return lasterror.For(c.keepEntryRecordForDeletion(ctx, be))
}

// RevokeDeleted revokes every credential of a deleted entry, once its objects are gone.
func (c *Credentials) RevokeDeleted(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	return lasterror.For(c.revokeDeletedEntryCredentials(ctx, log, be))
}
