// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package copystore

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MinFailoverAfter is the shortest copy.failover.after: a few probe intervals, so that one
// failed probe or a short outage of the primary's store never moves a seed's backups.
const MinFailoverAfter = 5 * time.Minute

// Failover is `copy.failover`: the declared automatic failover. Once the primary's probe
// (BucketAvailable) has been False for After while the copy is available and converged, the
// BackupBucket records the failover and every entry is served from the copy as with
// `serve: copy`; the record is never undone automatically: it ends when the operator sets
// `serve: copy` (adopting it), after which `serve: primary` is the guarded way back.
type Failover struct {
	// After is how long BucketAvailable must have been False (at least MinFailoverAfter).
	After *metav1.Duration `json:"after"`
}

// AfterOrZero is After, 0 for none.
func (f *Failover) AfterOrZero() time.Duration {
	if f == nil || f.After == nil {
		return 0
	}
	return f.After.Duration
}

// validateFailover checks copy.failover at path of a copy of copyType for a primary of
// primaryType: refused where serve: copy is (another type: the shoot's Etcd takes its store
// provider from the Seed's backup provider).
func validateFailover(path *field.Path, f *Failover, copyType, primaryType string) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if copyType != "" && copyType != primaryType {
		errs = append(errs, field.Forbidden(path, "only a copy of the primary's type "+primaryType+" can be failed over to: the shoot's Etcd takes its store provider from the Seed's backup provider"))
	}
	switch d := f.After; {
	case d == nil:
		errs = append(errs, field.Required(path.Child("after"), "how long the primary's BucketAvailable must have been False before every entry is served from the copy"))
	case d.Duration < MinFailoverAfter:
		errs = append(errs, field.Invalid(path.Child("after"), d.Duration.String(), "must be at least "+MinFailoverAfter.String()+": a short outage must not move the seed's backups"))
	}
	return errs
}
