// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"context"
	"fmt"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsbackupentrycontroller "github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EtcdKey is the shoot's Etcd whose backups be holds: gardenlet's etcd-main
// (v1beta1constants.ETCDMain) in the shoot's namespace, the one Etcd with a backup store. ok is
// false for a migration's source- entry (its shoot's Etcd on this seed is the live entry's) and a
// garden's entry (its Etcd is gardener-operator's): their etcd-backup follows the decision alone.
func EtcdKey(be *extensionsv1alpha1.BackupEntry) (client.ObjectKey, bool) {
	if IsSourceEntry(be) || IsGardenEntry(be) {
		return client.ObjectKey{}, false
	}
	namespace, _ := extensionsbackupentrycontroller.ExtractShootDetailsFromBackupEntryName(be.Name)
	return client.ObjectKey{Namespace: namespace, Name: v1beta1constants.ETCDMain}, true
}

// EtcdContainer is the bucket the shoot's Etcd (EtcdKey) names now, its
// spec.backup.store.container, which gardenlet set from etcd-backup's bucketName when it last
// deployed it: the bucket etcd-backup-restore writes. found is false without an Etcd (the shoot
// not yet deployed, or gone), without a backup store, or for an entry whose Etcd is not read.
// The extension only reads Etcds.
func EtcdContainer(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry) (container string, found bool, err error) {
	key, ok := EtcdKey(be)
	if !ok {
		return "", false, nil
	}
	etcd := &druidcorev1alpha1.Etcd{}
	switch err := reader.Get(ctx, key, etcd); {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("reading the shoot's Etcd %s for the bucket it writes: %w", key, err)
	}
	container, found = StoreContainer(etcd)
	return container, found, nil
}

// StoreContainer is etcd's spec.backup.store.container (ok false: none).
func StoreContainer(etcd *druidcorev1alpha1.Etcd) (string, bool) {
	if s := etcd.Spec.Backup.Store; s != nil && s.Container != nil {
		return *s.Container, true
	}
	return "", false
}
