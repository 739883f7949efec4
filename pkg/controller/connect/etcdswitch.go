// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect

import (
	"context"
	"errors"
	"fmt"
	"maps"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The two-phase switch of an entry's etcd-backup between its bucket and the copy bucket.
// etcd-backup-restore reloads mounted credentials at its next snapshot, but the bucket it writes
// is the Etcd's spec.backup.store.container, which gardenlet sets from etcd-backup's bucketName
// only when it deploys the Etcd (at the shoot's reconcile, when etcd rolls). A secret that changed
// both at once would leave the sidecar with one store's credentials and the other's bucket, and
// no snapshot would land until the roll. So bucketName follows the serve decision (DecideServe),
// and the credentials (and region, endpoint and every other key) follow the bucket the shoot's
// Etcd names now.

// EtcdBackupObserved is what DecideEtcdBackup decides over, for one entry.
type EtcdBackupObserved struct {
	// FromCopy is DecideServe's: the copy is served.
	FromCopy bool
	// Bucket is the entry's own bucket; CopyBucket the copy bucket its config declares ("": none,
	// or the copy bucket is the entry's own).
	Bucket, CopyBucket string
	// EtcdFound: the shoot's Etcd exists (and is read: not for a migration's source- or a
	// garden's entry); EtcdContainer is its spec.backup.store.container.
	EtcdFound     bool
	EtcdContainer string
	// HeldErr is the error of using the store the Etcd names with its own credentials (its
	// etcd-backup data could not be made, or its bucket not read); nil: usable, or not tried.
	HeldErr error
	// HeldFailedOver: the store the Etcd names is the entry's own bucket and its BackupBucket
	// records an automatic failover (FailoverRecord): the primary was given up.
	HeldFailedOver bool
}

// heldUnusable is why the store the Etcd names is given up during a switch ("": it is not, or
// not for good). Only lasting evidence counts: the bucket does not exist, its credentials are
// refused or missing (a configuration error: the copy's secret gone from the Seed's resources),
// or a failover from it is recorded. A timeout, a throttled or stalled read proves
// nothing: switching the credentials then would leave the shoot without snapshots until the
// Etcd rolls.
func heldUnusable(o EtcdBackupObserved) string {
	switch {
	case o.HeldFailedOver:
		return "an automatic failover from it is recorded"
	case o.HeldErr == nil:
		return ""
	case errors.Is(o.HeldErr, objectstore.ErrBucketNotFound), errors.Is(o.HeldErr, objectstore.ErrForbidden), errors.Is(o.HeldErr, objectstore.ErrUnauthenticated),
		errors.Is(o.HeldErr, objectstore.ErrInvalidConfig):
		return fmt.Sprintf("its credentials cannot be used (%v)", o.HeldErr)
	}
	return ""
}

// EtcdBackupPlan is which store's bucket name and which store's credentials etcd-backup holds.
type EtcdBackupPlan struct {
	// BucketFromCopy: bucketName names the copy bucket (else the entry's bucket).
	BucketFromCopy bool
	// CredentialsFromCopy: every other key is the copy's (ref-<credentialsRef>, its region); else
	// the entry's, as the entry's own bucket gives them.
	CredentialsFromCopy bool
	// Message says what etcd-backup holds and, while the switch is pending, until when.
	Message string
	// Err is set while the switch is pending and the store the Etcd names failed without lasting
	// evidence (EtcdBackupObserved.HeldErr): the entry's reconcile fails with it and etcd-backup
	// is left as it is.
	Err error
}

// Pending reports a switch in progress: etcd-backup names one store and holds the other's
// credentials, those of the bucket the Etcd writes until gardenlet rolls it.
func (p EtcdBackupPlan) Pending() bool { return p.BucketFromCopy != p.CredentialsFromCopy }

// DecideEtcdBackup is the pure decision of the two-phase switch: bucketName follows the serve
// decision; the credentials follow the bucket the shoot's Etcd names now. Without an Etcd, with a
// container that names neither bucket, or while the store the Etcd names cannot be used, both
// follow the decision (nothing lands until the roll then either way). The store the Etcd names is
// given up only on lasting evidence (heldUnusable); any other failure of it is Err.
func DecideEtcdBackup(o EtcdBackupObserved) EtcdBackupPlan {
	want, held := o.Bucket, o.CopyBucket
	if o.FromCopy {
		want, held = o.CopyBucket, o.Bucket
	}
	plan := EtcdBackupPlan{BucketFromCopy: o.FromCopy, CredentialsFromCopy: o.FromCopy}
	switch {
	case o.CopyBucket == "" || o.CopyBucket == o.Bucket:
		plan.Message = fmt.Sprintf("etcd-backup names bucket %q with its credentials.", want)
	case !o.EtcdFound:
		plan.Message = fmt.Sprintf("etcd-backup names bucket %q with its credentials (the shoot has no Etcd).", want)
	case o.EtcdContainer == want:
		plan.Message = fmt.Sprintf("etcd-backup names bucket %q with its credentials; the Etcd names it too.", want)
	case o.EtcdContainer != held:
		plan.Message = fmt.Sprintf("etcd-backup names bucket %q with its credentials; the Etcd names bucket %q, neither the entry's nor the copy bucket.", want, o.EtcdContainer)
	case heldUnusable(o) != "":
		plan.Message = fmt.Sprintf("etcd-backup names bucket %q with its credentials at once: the Etcd still names bucket %q, but %s; no snapshot lands until gardenlet rolls the Etcd onto bucket %q at the shoot's next reconcile.",
			want, held, heldUnusable(o), want)
	case o.HeldErr != nil:
		plan.CredentialsFromCopy = !o.FromCopy // what etcd-backup holds, left as it is
		plan.Err = fmt.Errorf("switch pending: the Etcd still names bucket %q, whose credentials etcd-backup keeps until gardenlet rolls the Etcd onto bucket %q, but bucket %q failed (etcd-backup is left as it is): %w", held, want, held, o.HeldErr)
		plan.Message = plan.Err.Error()
	default:
		plan.CredentialsFromCopy = !o.FromCopy
		plan.Message = fmt.Sprintf("switch pending: the Etcd still names bucket %q; etcd-backup names bucket %q but keeps the credentials of bucket %q until gardenlet rolls the Etcd onto bucket %q (at the shoot's next reconcile), and the shoot writes bucket %q meanwhile.",
			held, want, held, want, held)
	}
	return plan
}

// EtcdBackupData is etcd-backup's data with the copy's credentials for be: the copy's secret
// (ref-<credentialsRef>) rendered by p as for the primary, for the copy bucket and the copy's
// region (bucketName: the copy bucket), and served, be with the copy's bucket, region and secret
// in its spec (what the copy's data was rendered for, to check the bucket with).
func (c *CopyPlace) EtcdBackupData(ctx context.Context, reader client.Reader, p provider.Provider, be *extensionsv1alpha1.BackupEntry) (map[string][]byte, *extensionsv1alpha1.BackupEntry, error) {
	data, err := c.SecretData(ctx, reader)
	if err != nil {
		return nil, nil, err
	}
	served := be.DeepCopy()
	served.Spec.BucketName, served.Spec.Region, served.Spec.SecretRef = c.Bucket, c.Region, c.Secret
	data = maps.Clone(data)
	data[v1beta1constants.DataKeyBackupBucketName] = []byte(c.Bucket)
	out, err := p.EtcdBackupSecretData(served, data)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd-backup with the copy's credentials: %w", err)
	}
	return out, served, nil
}

// writesCopy reports whether be's shoot writes the copy bucket now: its Etcd names the copy
// bucket and its etcd-backup holds the copy's credentials (EtcdBackupData). For an entry whose
// Etcd is not read (entryinfo.EtcdKey: a garden's), etcd-backup's bucketName stands for it.
func (c *CopyPlace) writesCopy(ctx context.Context, reader client.Reader, p provider.Provider, be *extensionsv1alpha1.BackupEntry) (bool, error) {
	container, found, err := entryinfo.EtcdContainer(ctx, reader, be)
	if _, read := entryinfo.EtcdKey(be); !read && err == nil {
		container, err = entryinfo.EtcdBackupBucket(ctx, reader, be)
		found = container != ""
	}
	if err != nil || !found || container != c.Bucket {
		return false, err
	}
	want, _, err := c.EtcdBackupData(ctx, reader, p, be)
	if errors.Is(err, ErrCopySecretMissing) {
		return false, nil // etcd-backup cannot hold (or be given) credentials that are gone
	}
	if err != nil {
		return false, err
	}
	return entryinfo.EtcdBackupHolds(ctx, reader, be, want)
}
