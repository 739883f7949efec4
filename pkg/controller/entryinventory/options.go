// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
)

// DefaultInterval is --entry-inventory-interval's default.
const DefaultInterval = 30 * time.Minute

// Options configure the entry inventory and its BackupsFresh verdict (a
// periodic.Options).
type Options struct {
	// Interval is how often each entry's prefix is counted (0: never; what an earlier run
	// published is removed).
	Interval time.Duration
	// Thresholds are the extension's default freshness thresholds (a bucket's providerConfig
	// may override them).
	Thresholds inventory.Thresholds
}

var _ periodic.Options = (*Options)(nil)

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{Interval: DefaultInterval, Thresholds: inventory.DefaultThresholds}
}

// AddFlags implements periodic.Options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "entry-inventory-interval", o.Interval, "How often each entry's prefix is counted for its inventory and the BackupsFresh condition (with up to 10% jitter, the first count at the entry's own slot within one interval; 0 turns it off and removes the BackupsFresh conditions, inventories and metrics an earlier run published).")
	fs.DurationVar(&o.Thresholds.FullSnapshotMaxAge, "full-snapshot-max-age", o.Thresholds.FullSnapshotMaxAge, "BackupsFresh turns False when an etcd's newest full snapshot is older (a bucket's providerConfig backupFreshness overrides it).")
	fs.DurationVar(&o.Thresholds.DeltaSnapshotMaxAge, "delta-snapshot-max-age", o.Thresholds.DeltaSnapshotMaxAge, "BackupsFresh turns False when an etcd's newest snapshot of either kind is older (a bucket's providerConfig backupFreshness overrides it).")
}

// Validate implements periodic.Options.
func (o *Options) Validate() error {
	switch {
	case o.Interval < 0:
		return fmt.Errorf("--entry-inventory-interval must not be negative, got %s", o.Interval)
	case o.Thresholds.FullSnapshotMaxAge <= 0 || o.Thresholds.DeltaSnapshotMaxAge <= 0:
		return fmt.Errorf("--full-snapshot-max-age and --delta-snapshot-max-age must be positive, got %s and %s", o.Thresholds.FullSnapshotMaxAge, o.Thresholds.DeltaSnapshotMaxAge)
	}
	return nil
}

// Complete implements periodic.Options.
func (o *Options) Complete() error { return o.Validate() }
