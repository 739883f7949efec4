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

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
)

// servedFromCopy is etcd-backup's data while copy.serve is copy (connect.DecideServe): the copy
// bucket's name, the copy's region and the copy's credentials (ref-<credentialsRef>, not the
// entry's), rendered by the provider as for the primary, after one read of the copy bucket with
// them. Entry credentials (entryCredentials) are not issued in the copy: the shoot gets the
// copy's credentials. ok is false when etcd-backup names the primary (the plan says why); a
// refused plan is the entry's error, and etcd-backup is left as it is.
func (d *delegate) servedFromCopy(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (map[string][]byte, bool, error) {
	plan, place, err := connect.ServeOf(ctx, d.reader, d.provider, be, entryinfo.IsSourceEntry(be))
	if err != nil {
		return nil, false, lasterror.For(err)
	}
	if plan.Refused != nil {
		return nil, false, lasterror.For(plan.Refused)
	}
	if !plan.FromCopy {
		return nil, false, nil
	}
	data, err := place.SecretData(ctx, d.reader)
	if err != nil {
		return nil, false, lasterror.For(err)
	}
	served := be.DeepCopy()
	served.Spec.BucketName, served.Spec.Region, served.Spec.SecretRef = place.Bucket, place.Region, place.Secret
	data = maps.Clone(data)
	data[v1beta1constants.DataKeyBackupBucketName] = []byte(place.Bucket)
	out, err := d.provider.EtcdBackupSecretData(served, data)
	if err != nil {
		return nil, false, lasterror.For(fmt.Errorf("etcd-backup of the copy (copy.serve is copy): %w", err))
	}
	if err := d.checkBucket(ctx, served); err != nil {
		return nil, false, lasterror.For(fmt.Errorf("copy.serve is copy: %w", err))
	}
	return out, true, nil
}
