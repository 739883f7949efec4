// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package rehearsal is the rehearsal of a takeover in one seed (--rehearse): beside the
// incumbent, it reads the seed's BackupBuckets and BackupEntries of this extension's type and
// the operator's secrets, and tells for each whether this extension can take it over, what its
// first reconcile would change, and what the read-only checks find (with Options.Drills, each
// entry's restore drill too: restoredrill.Driller, its verdict into the report only). It writes
// nothing the incumbent owns: no bucket setting, no secret, no status, finalizer or annotation of
// a BackupBucket or BackupEntry. What it writes is its own: a ConfigMap in the extension's
// namespace (with drills, a second one: the drill mark), the condition Rehearsal on the seed's
// Extension backup-<provider> and, with garden access, on its own ControllerInstallation in the
// garden (Garden), and metrics.
package rehearsal

import (
	"errors"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Verdict is whether an object can be taken over.
type Verdict string

const (
	// Adoptable is the verdict where the first reconcile would succeed as far as reading
	// tells, with Changes.
	Adoptable Verdict = "Adoptable"
	// NotAdoptable is the verdict where the first reconcile would refuse the object (Reason
	// says why).
	NotAdoptable Verdict = "NotAdoptable"
	// CannotTell is the verdict where something it depends on could not be read (Reason says
	// what); never taken for adoptable.
	CannotTell Verdict = "CannotTell"
)

// Kinds of the objects rehearsed.
const (
	KindBackupBucket = "BackupBucket"
	KindBackupEntry  = "BackupEntry"
)

// Report is the rehearsal of one object.
type Report struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Verdict and Reason (empty when Adoptable).
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Changes the first reconcile would make, in its order; set only when Adoptable.
	Changes []objectstore.BucketChange `json:"changes,omitempty"`
	// Checks are the read-only checks' results, whatever the verdict.
	Checks []Check `json:"checks,omitempty"`
}

// Check is the result of one read-only check (the bucket's probe, an entry's inventory and
// BackupsFresh, its restore drill and BackupsRestorable), as the condition of that name would say
// it.
type Check struct {
	Name    string                            `json:"name"`
	Status  gardencorev1beta1.ConditionStatus `json:"status"`
	Reason  string                            `json:"reason,omitempty"`
	Message string                            `json:"message,omitempty"`
}

// Step is one thing the first reconcile of an object depends on, in the order it meets them.
type Step struct {
	// What names it for the reason: "spec.providerConfig", "credentials secret", "plan".
	What string
	Err  error
	// Refusal is true where an error of the object's own (objectstore.ErrInvalidConfig,
	// objectstore.ErrOwnedByOther) is what the takeover's reconcile would fail with too: the
	// object is not adoptable. Elsewhere (a secret this process cannot read, a store that does
	// not answer) any error only means the rehearsal cannot tell.
	Refusal bool
}

// Decide is the verdict over an object's steps: the first that failed decides; a refusal of
// the object's own makes it NotAdoptable, any other error CannotTell; none failed: Adoptable.
//
//	first failed step        | error class                              | verdict
//	none                     | -                                        | Adoptable
//	Refusal                  | ErrInvalidConfig or ErrOwnedByOther,     | NotAdoptable
//	                         | not a secret missing                     |
//	Refusal                  | any other                                | CannotTell
//	not Refusal              | any                                      | CannotTell
func Decide(steps []Step) (Verdict, string) {
	for _, s := range steps {
		if s.Err == nil {
			continue
		}
		if s.Refusal && refusal(s.Err) {
			return NotAdoptable, fmt.Sprintf("%s: %v", s.What, s.Err)
		}
		return CannotTell, fmt.Sprintf("cannot tell: %s: %v", s.What, s.Err)
	}
	return Adoptable, ""
}

// refusal: err is the object's own (its config, its name, a bucket of another owner), not a
// secret this process could not find: the secret may be there for the incumbent (RBAC, a copy
// gardenlet has not made yet), so a missing one never makes an object NotAdoptable.
func refusal(err error) bool {
	if errors.As(err, new(*secrets.MissingError)) {
		return false
	}
	return errors.Is(err, objectstore.ErrInvalidConfig) || errors.Is(err, objectstore.ErrOwnedByOther)
}

// CountChanges counts r's changes by action.
func (r Report) CountChanges() map[string]int {
	counts := map[string]int{}
	for _, c := range r.Changes {
		counts[string(c.Action)]++
	}
	return counts
}
