// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// Feature is a capability of a store that some cases need. A harness provides the hook of every
// feature its store has, and lists in Unsupported every feature it lacks: the suite fails on a
// missing hook that is not declared unsupported (a store must not pass by forgetting a hook)
// and on a hook set for a feature declared unsupported.
type Feature string

const (
	// BadCredentials means the store can be reached with wrong credentials (Harness.BadCredentials).
	BadCredentials Feature = "BadCredentials"
	// ForeignBuckets means a bucket owned by someone else can be made (Harness.ForeignBucket).
	ForeignBuckets Feature = "ForeignBuckets"
	// Regions means buckets live in regions, and another region is refused (Harness.OtherRegion).
	Regions Feature = "Regions"
	// Versions means the store keeps object versions (Harness.Versioning).
	Versions Feature = "Versions"
	// Locks means objects can be held by retention locks (Harness.Lock).
	Locks Feature = "Locks"
	// ExcludeMark means etcd-backup-restore honours an exclude mark on this store, which the harness
	// can set (Harness.MarkExcluded).
	ExcludeMark Feature = "ExcludeMark"
	// Deferral means the store deletes locked objects by itself once their locks end (no hook: the
	// suite checks that DeferDeletion answers nil where it is supported and
	// objectstore.ErrUnsupported where it is declared unsupported).
	Deferral Feature = "Deferral"
	// DeferralReadBack means the harness can read a deferral back with the store's own means
	// (Harness.DeferralCovers); it needs Deferral.
	DeferralReadBack Feature = "DeferralReadBack"
)

// hooks says, for each feature, whether h provides its hook.
func (h Harness) hooks() map[Feature]bool {
	return map[Feature]bool{
		BadCredentials:   h.BadCredentials.DataPlane != nil,
		ForeignBuckets:   h.ForeignBucket != nil,
		Regions:          h.OtherRegion != "",
		Versions:         h.Versioning != nil,
		Locks:            h.Lock != nil,
		DeferralReadBack: h.DeferralCovers != nil,
		ExcludeMark:      h.MarkExcluded != nil,
	}
}

// declaredOnly are the features without a hook: only Unsupported says whether a store has them.
var declaredOnly = []Feature{Deferral}

// checkFeatures fails the test when h's hooks and its Unsupported list disagree.
func checkFeatures(t *testing.T, h Harness) {
	t.Helper()
	if err := h.featureMismatch(); err != nil {
		t.Fatal(err)
	}
}

// featureMismatch says where h's hooks and its Unsupported list disagree: an unknown feature, a
// hook missing without the feature declared unsupported, or a hook set for a feature declared so.
func (h Harness) featureMismatch() error {
	hooks := h.hooks()
	for _, f := range h.Unsupported {
		if _, known := hooks[f]; !known && !slices.Contains(declaredOnly, f) {
			return fmt.Errorf("harness declares unknown feature %q unsupported", f)
		}
	}
	if h.unsupported(Deferral) && !h.unsupported(DeferralReadBack) {
		return fmt.Errorf("harness declares %s unsupported but not %s, which needs it", Deferral, DeferralReadBack)
	}
	features := slices.Sorted(maps.Keys(hooks))
	for _, f := range features {
		switch set, declared := hooks[f], h.unsupported(f); {
		case !set && !declared:
			return fmt.Errorf("harness sets no hook for feature %s and does not declare it unsupported (Harness.Unsupported)", f)
		case set && declared:
			return fmt.Errorf("harness sets the hook of feature %s and declares it unsupported", f)
		}
	}
	return nil
}

func (h Harness) unsupported(f Feature) bool { return slices.Contains(h.Unsupported, f) }

// skipUnsupported skips a case that needs f, which the harness declared unsupported (checked
// against its hooks by Run).
func skipUnsupported(t *testing.T, h Harness, f Feature) {
	t.Helper()
	if h.unsupported(f) {
		t.Skipf("the store does not support %s (declared in Harness.Unsupported)", f)
	}
}
