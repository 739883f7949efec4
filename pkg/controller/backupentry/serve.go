// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"fmt"
	"maps"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
)

// Event reasons of the two-phase switch (connect.DecideEtcdBackup).
const (
	// ReasonBackupSwitchPending: etcd-backup names the bucket the serve decision names and keeps
	// the credentials of the bucket the Etcd still names, until gardenlet rolls the Etcd.
	ReasonBackupSwitchPending = "BackupSwitchPending"
	// ReasonBackupSwitchedAtOnce: the bucket the Etcd still names cannot be used with its own
	// credentials: etcd-backup holds the decided store's credentials at once.
	ReasonBackupSwitchedAtOnce = "BackupSwitchedAtOnce"
)

// etcdBackupData is etcd-backup's data: the store copy.serve decides (connect.ServeOf) names the
// bucket, and the credentials, region and every other key are those of the bucket the shoot's
// Etcd names now (connect.DecideEtcdBackup): the sidecar writes where it wrote until gardenlet
// rolls the Etcd onto the decided bucket, and the Etcd watch (etcdToEntries) brings the
// credentials after within seconds. The decided store must be usable with its own credentials
// (the copy's: ref-<credentialsRef>, rendered by the provider as for the primary; one read of its
// bucket), else the entry fails and etcd-backup is left as it is; the store the Etcd names that
// cannot be used (a failover from a primary that is gone) gives way to the decided one at once.
// Entry credentials (entryCredentials) are issued only where the shoot holds the entry's
// bucket's credentials: never in the copy. A refused plan is the entry's error.
func (d *delegate) etcdBackupData(ctx context.Context, be *extensionsv1alpha1.BackupEntry, data map[string][]byte, o *entrycredentials.Outcome, etcd *etcdDecided) (map[string][]byte, error) {
	plan, place, err := connect.ServeOf(ctx, d.reader, d.provider, be, entryinfo.IsSourceEntry(be))
	if err != nil {
		return nil, lasterror.For(err)
	}
	if plan.Refused != nil {
		return nil, lasterror.For(plan.Refused)
	}
	// A recorded failover whose copy bucket the configuration no longer declares (copy: removed,
	// or another copy.bucketName): the entry fails with the configuration error and etcd-backup
	// stays on the recorded copy, neither the primary nor another copy bucket (which lack what
	// the shoot wrote since the failover).
	rec, err := connect.FailoverOf(ctx, d.reader, be.Spec.BucketName)
	if err != nil {
		return nil, lasterror.For(err)
	}
	declaredCopy := ""
	if place != nil {
		declaredCopy = place.Bucket
	}
	if conflict := connect.FailoverConflict(rec, place != nil, declaredCopy); conflict != nil {
		return nil, lasterror.For(conflict)
	}
	observed := connect.EtcdBackupObserved{FromCopy: plan.FromCopy, Bucket: be.Spec.BucketName}
	if place != nil && place.Bucket != be.Spec.BucketName {
		observed.CopyBucket = place.Bucket
		if observed.EtcdContainer, observed.EtcdFound, err = entryinfo.EtcdContainer(ctx, d.reader, be); err != nil {
			return nil, lasterror.For(err)
		}
	}
	sw := connect.DecideEtcdBackup(observed)
	*etcd = etcdDecided{decided: true}
	if observed.EtcdFound {
		etcd.container = observed.EtcdContainer
	}

	var copyData, primaryData map[string][]byte
	var copyErr, primaryErr error
	if sw.BucketFromCopy || sw.CredentialsFromCopy {
		copyData, copyErr = d.copyData(ctx, be, place)
	}
	if !sw.BucketFromCopy || !sw.CredentialsFromCopy {
		primaryData, primaryErr = d.primaryData(ctx, be, data)
	}
	errOf := func(fromCopy bool) error {
		if fromCopy {
			return copyErr
		}
		return primaryErr
	}
	// The decided store is what gardenlet rolls the Etcd onto: it must be usable.
	if err := errOf(sw.BucketFromCopy); err != nil {
		return nil, lasterror.For(err)
	}
	if heldErr := errOf(sw.CredentialsFromCopy); sw.Pending() && heldErr != nil {
		// Given up only on lasting evidence: credentials and bucketName both the decided
		// store's then, made above; else the reconcile fails and etcd-backup stays as it is.
		observed.HeldErr = heldErr
		if !sw.CredentialsFromCopy {
			rec, err := connect.FailoverOf(ctx, d.reader, be.Spec.BucketName)
			if err != nil {
				return nil, lasterror.For(err)
			}
			observed.HeldFailedOver = rec != nil
		}
		if sw = connect.DecideEtcdBackup(observed); sw.Err != nil {
			return nil, lasterror.For(sw.Err)
		}
	}

	out := copyData
	if !sw.CredentialsFromCopy {
		// The bucket's credential or the entry's own (entryCredentials); what changes hands is
		// recorded before gardener's actuator writes it.
		if out, err = d.creds.Data(ctx, be, o, data, primaryData); err != nil {
			return nil, lasterror.For(err)
		}
	}
	out = maps.Clone(out)
	out[v1beta1constants.DataKeyBackupBucketName] = []byte(be.Spec.BucketName)
	if sw.BucketFromCopy {
		out[v1beta1constants.DataKeyBackupBucketName] = []byte(place.Bucket)
	}
	switch {
	case sw.Pending():
		d.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonBackupSwitchPending, "Reconcile", "%s", sw.Message)
	case observed.HeldErr != nil || observed.HeldFailedOver:
		d.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonBackupSwitchedAtOnce, "Reconcile", "%s", sw.Message)
	}
	return out, nil
}

// primaryData is etcd-backup's data with the entry's bucket's credentials as the provider renders
// them, after one read of the bucket with them.
func (d *delegate) primaryData(ctx context.Context, be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	out, err := d.provider.EtcdBackupSecretData(be, data)
	if err != nil {
		return nil, err
	}
	if err := d.checkBucket(ctx, be); err != nil {
		return nil, err
	}
	return out, nil
}

// copyData is etcd-backup's data with the copy's credentials (connect.CopyPlace.EtcdBackupData),
// after one read of the copy bucket with them.
func (d *delegate) copyData(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace) (map[string][]byte, error) {
	out, served, err := place.EtcdBackupData(ctx, d.reader, d.provider, be)
	if err != nil {
		return nil, fmt.Errorf("copy.serve: %w", err)
	}
	if err := d.checkBucket(ctx, served); err != nil {
		return nil, fmt.Errorf("copy.serve: the copy bucket: %w", err)
	}
	return out, nil
}
