// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"encoding/json"
	"slices"
	"strings"

	extensionsbackupentrycontroller "github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations of an entry's own credential records (the BackupEntry controller writes them; the
// BackupBucket controller reads where they name principals for its sweeps and its hand-back).
// IDs, issuers and places, never values.
const (
	// AnnotationEntryCredential, AnnotationEntryIssuer, AnnotationEntryIssuedIn and
	// AnnotationEntryAccess on the etcd-backup secret record the credential it holds.
	AnnotationEntryCredential = "backup.extensions.gardener.cloud/entry-credential"
	AnnotationEntryIssuer     = "backup.extensions.gardener.cloud/entry-credential-issuer"
	AnnotationEntryIssuedIn   = "backup.extensions.gardener.cloud/entry-credential-issued-in"
	AnnotationEntryAccess     = "backup.extensions.gardener.cloud/entry-credential-access"
	// AnnotationEntryOf names the BackupEntry whose record this is: two entries share a shoot
	// namespace (a shoot re-created under its name while gardenlet keeps the old entry through
	// its deletion grace), and so its etcd-backup secret, which the last to reconcile writes.
	AnnotationEntryOf = "backup.extensions.gardener.cloud/entry-credential-of"
	// AnnotationEntryUnrevoked records, as a JSON list, the credentials of the entry that the
	// secret no longer holds but that could not be revoked yet.
	AnnotationEntryUnrevoked = "backup.extensions.gardener.cloud/entry-credential-unrevoked"
	// AnnotationEntryRetiring records, as JSON, a rotated-out credential whose retirement its
	// issuer has not confirmed yet.
	AnnotationEntryRetiring = "backup.extensions.gardener.cloud/entry-credential-retiring"
	// AnnotationEntryCredentialIssuers is kept on a BackupEntry being deleted: the records of its
	// own credentials (JSON list) across the deletion's passes, for gardener's actuator deletes
	// the etcd-backup secret in the first.
	AnnotationEntryCredentialIssuers = "backup.extensions.gardener.cloud/entry-credential-issuers"
)

// IssuerPlace is an entry issuer and the place (its Location) it issued a credential in.
type IssuerPlace struct{ Issuer, Place string }

// RecordsOf says whether the records on an etcd-backup secret with annotations are entry's: the
// record names its entry, or (written before it did) the secret's last writer is entry
// (gardener's actuator writes created-by, and the entry's pass records right after its write).
func RecordsOf(entry string, annotations map[string]string) bool {
	if e := annotations[AnnotationEntryOf]; e != "" {
		return e == entry
	}
	return annotations[genericactuator.AnnotationKeyCreatedByBackupEntry] == entry
}

// placeRecord is the part of a record that says where a credential lives.
type placeRecord struct{ Issuer, IssuedIn string }

// PlacesRecordedBy returns, sorted and each once, the issuers and places that the records of
// entry name: those on its etcd-backup secret (etcdBackup, its annotations; nil: none) when
// they are entry's (RecordsOf) -- the published credential, the unrevoked ones, a retiring
// one -- and those kept on the entry for its deletion (entryAnnotations). A record that does not
// decode names nothing.
func PlacesRecordedBy(entry string, entryAnnotations, etcdBackup map[string]string) []IssuerPlace {
	var records []placeRecord
	if RecordsOf(entry, etcdBackup) {
		if etcdBackup[AnnotationEntryCredential] != "" {
			records = append(records, placeRecord{Issuer: etcdBackup[AnnotationEntryIssuer], IssuedIn: etcdBackup[AnnotationEntryIssuedIn]})
		}
		records = append(records, decodeRecords(etcdBackup[AnnotationEntryUnrevoked])...)
		records = append(records, decodeRecords(etcdBackup[AnnotationEntryRetiring])...)
	}
	records = append(records, decodeRecords(entryAnnotations[AnnotationEntryCredentialIssuers])...)
	var out []IssuerPlace
	for _, r := range records {
		if r.Issuer != "" {
			out = append(out, IssuerPlace{Issuer: r.Issuer, Place: r.IssuedIn})
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

// decodeRecords reads a JSON list of records, or one record alone.
func decodeRecords(raw string) []placeRecord {
	if raw == "" {
		return nil
	}
	var list []placeRecord
	if json.Unmarshal([]byte(raw), &list) == nil {
		return list
	}
	var one placeRecord
	if json.Unmarshal([]byte(raw), &one) == nil {
		return []placeRecord{one}
	}
	return nil
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
