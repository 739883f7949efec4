// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"fmt"
	"maps"
	"reflect"

	"cloud.google.com/go/storage"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
)

// Taking over from gardener-extension-provider-gcp v1.54.1 (see docs/gcp.md, "Taking over from
// and handing back to provider-gcp").
//
// Its BackupBucket actuator names the bucket exactly as the BackupBucket
// (pkg/controller/backupbucket/actuator.go L103, Name: bb.Name) in the project of the
// BackupBucket's credentials, with uniform bucket-level access (L104-106), soft delete off
// (L108-110), no labels, and a lifecycle of exactly one rule, delete a day after the custom time
// (L111-127), which every reconcile of it restores (L71-76, L191-204). It issues no credentials of
// its own: its entries use the BackupBucket's secret. Its entry deletion marks the objects a
// retention policy holds with a custom time (pkg/gcp/client/storage.go L131-136), which that
// rule deletes: the same rule and mark as this extension's (markedRule), so marks of either are
// deleted under either.
//
// A bucket of the BackupBucket's name in the credentials' project (bucket names are global; the
// project listing tells the project) is:
//   - this extension's: it carries gcpapi.ManagedLabel=gcpapi.ManagedLabelValue;
//   - provider-gcp's, adopted: no ManagedLabel, uniform bucket-level access on and the lifecycle
//     exactly provider-gcp's one rule; it gets AdoptedLabel=AdoptedFromProviderGCP (and
//     ManagedLabel), and is converged like any bucket of this extension: nothing is re-created,
//     renamed or emptied, the marks keep their meaning;
//   - anybody else's: anything else (another lifecycle, a ManagedLabel of another value, uniform
//     bucket-level access off): ErrOwnedByOther, untouched.

// AdoptedLabel records on a bucket this extension adopted whose it was; AdoptedFromProviderGCP is
// its value for a bucket of provider-gcp.
const (
	AdoptedLabel           = gcpapi.AdoptedLabel
	AdoptedFromProviderGCP = "provider-gcp"
)

// notIncumbents says why a bucket without this extension's label is not provider-gcp's, or ""
// when it is.
func notIncumbents(attrs *storage.BucketAttrs) string {
	if v, ok := attrs.Labels[gcpapi.ManagedLabel]; ok {
		return fmt.Sprintf("it carries the label %s=%s, somebody else's", gcpapi.ManagedLabel, v)
	}
	if !attrs.UniformBucketLevelAccess.Enabled {
		return "uniform bucket-level access is off"
	}
	if !reflect.DeepEqual(attrs.Lifecycle.Rules, []storage.LifecycleRule{markedRule()}) {
		return fmt.Sprintf("its lifecycle is not exactly provider-gcp's one rule %s", describeRule(markedRule()))
	}
	return ""
}

// adopting is cfg with the adoption label added to the labels EnsureBucket sets.
func adopting(cfg *gcpapi.BackupBucketConfig) *gcpapi.BackupBucketConfig {
	c := *cfg
	c.Labels = maps.Clone(cfg.Labels)
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels[AdoptedLabel] = AdoptedFromProviderGCP
	return &c
}
