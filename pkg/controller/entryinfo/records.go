// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	extensionsbackupentrycontroller "github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// IssuerPlace is an entry issuer and the place (its Location) it issued a credential in.
type IssuerPlace struct{ Issuer, Place string }

// PlacesRecordedBy returns, sorted and each once, the issuers and places that the records of
// entry name: the record on its etcd-backup secret (etcdBackup, its annotations; nil: none) when
// it is entry's (entryrecord.Of) -- the published credential, the unrevoked ones, a retiring one
// -- and what the entry keeps (entryAnnotations, entryrecord.Kept): for its deletion, and the
// intent of a pass whose record a restart may have lost after gardener's write of the secret. A
// record that does not decode names nothing.
func PlacesRecordedBy(entry string, entryAnnotations, etcdBackup map[string]string) []IssuerPlace {
	record, _, _ := entryrecord.Read(entry, etcdBackup)
	credentials := append(record.Credentials(), entryrecord.ReadKept(entryAnnotations).Credentials()...)
	var out []IssuerPlace
	for _, c := range credentials {
		if c.Issuer != "" {
			out = append(out, IssuerPlace{Issuer: c.Issuer, Place: c.IssuedIn})
		}
	}
	slices.SortFunc(out, func(a, b IssuerPlace) int {
		if c := strings.Compare(a.Issuer, b.Issuer); c != 0 {
			return c
		}
		return strings.Compare(a.Place, b.Place)
	})
	return slices.Compact(out)
}

// EtcdBackupSecretKey is the secret gardener's generic actuator writes for be in its shoot's
// namespace, which etcd-backup-restore reads: etcd-backup, or source-etcd-backup for a source-
// entry of a migration.
func EtcdBackupSecretKey(be *extensionsv1alpha1.BackupEntry) client.ObjectKey {
	name := v1beta1constants.BackupSecretName
	if strings.HasPrefix(be.Name, v1beta1constants.BackupSourcePrefix+"-") {
		name = v1beta1constants.BackupSourcePrefix + "-" + name
	}
	namespace, _ := extensionsbackupentrycontroller.ExtractShootDetailsFromBackupEntryName(be.Name)
	return client.ObjectKey{Namespace: namespace, Name: name}
}

// EtcdBackupBucket is the bucketName of be's etcd-backup secret (EtcdBackupSecretKey; "": no
// secret): the bucket the shoot's Etcd takes. Only that key is read: the others are credentials.
func EtcdBackupBucket(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry) (string, error) {
	key := EtcdBackupSecretKey(be)
	s := &corev1.Secret{}
	switch err := reader.Get(ctx, key, s); {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the bucket named by the shoot's etcd-backup secret %s: %w", key, err)
	}
	return string(s.Data[v1beta1constants.DataKeyBackupBucketName]), nil
}

// EtcdBackupHolds reports whether be's etcd-backup secret (EtcdBackupSecretKey) holds every key
// of want with its value, bucketName aside: whether the shoot holds those credentials. No value
// leaves this function.
func EtcdBackupHolds(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry, want map[string][]byte) (bool, error) {
	key := EtcdBackupSecretKey(be)
	s := &corev1.Secret{}
	switch err := reader.Get(ctx, key, s); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading the shoot's etcd-backup secret %s: %w", key, err)
	}
	for k, v := range want {
		if k == v1beta1constants.DataKeyBackupBucketName {
			continue
		}
		if got, ok := s.Data[k]; !ok || !bytes.Equal(got, v) {
			return false, nil
		}
	}
	return true, nil
}
