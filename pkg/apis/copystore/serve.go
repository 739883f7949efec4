// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package copystore

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Serve is `copy.serve`: which store every entry's etcd-backup secret names, and so which store
// the shoots' etcd-backup-restore writes to and restores from.
type Serve string

const (
	// ServePrimary is the default: etcd-backup names the BackupBucket's own bucket.
	ServePrimary Serve = "primary"
	// ServeCopy is failover's or a move's: etcd-backup names the copy bucket, with the copy's region and credentials
	// (failover, or the switch of a move). The copy is then written by the shoots, and the
	// entry copy no longer copies into it.
	ServeCopy Serve = "copy"
)

// ServesCopy is true when `copy.serve: copy` is declared.
func (s *Settings) ServesCopy() bool { return s != nil && s.Serve == ServeCopy }

// validateServe checks copy.serve at path of a copy of copyType (empty: the primary's) for a
// primary of primaryType: only a copy of the primary's type can be served, because the shoot's
// Etcd takes its store provider from the Seed's backup provider, not from etcd-backup.
func validateServe(path *field.Path, s Serve, copyType, primaryType string) field.ErrorList {
	switch s {
	case "", ServePrimary:
		return nil
	case ServeCopy:
		if copyType != "" && copyType != primaryType {
			return field.ErrorList{field.Forbidden(path, "only a copy of the primary's type "+primaryType+" can be served: the shoot's Etcd takes its store provider from the Seed's backup provider")}
		}
		return nil
	}
	return field.ErrorList{field.NotSupported(path, s, []Serve{ServePrimary, ServeCopy})}
}

// ValidateHandBack refuses copy.serve: copy in a BackupBucketConfig (at path) that also sets
// handBack: the incumbent, once handed the bucket back, writes etcd-backup naming the primary,
// which lacks every snapshot the shoots wrote into the copy since the switch.
func (s *Settings) ValidateHandBack(path *field.Path, handBack bool) field.ErrorList {
	if !handBack || s == nil {
		return nil
	}
	if s.Failover != nil {
		return field.ErrorList{field.Forbidden(path.Child("copy", "failover"), "an automatic failover is not allowed with handBack: true: the incumbent provider extension, once the bucket is handed back, names the primary bucket in etcd-backup, which lacks what the shoots wrote into the copy since the failover")}
	}
	if !s.ServesCopy() {
		return nil
	}
	return field.ErrorList{field.Forbidden(path.Child("copy", "serve"), "copy is not allowed with handBack: true: the incumbent provider extension, once the bucket is handed back, names the primary bucket in etcd-backup, which lacks what the shoots wrote into the copy since the switch; set copy.serve to primary (after copying the copy back) before handing back")}
}
