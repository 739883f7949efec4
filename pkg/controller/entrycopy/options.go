// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

// DefaultInterval is --entry-copy-interval's default: gardenlet's delta snapshot period.
const DefaultInterval = 5 * time.Minute

// passDeadline bounds one pass (connect.CopyPassDeadline); the lag says so while a large
// snapshot is started again pass after pass.
const passDeadline = connect.CopyPassDeadline

// Options configure the entry copy (a periodic.Options).
type Options struct {
	// Interval is how often each entry is copied where its bucket's seed configuration declares
	// a copy (copy.interval overrides it per seed; 0: never, and what an earlier run published is
	// removed).
	Interval time.Duration
}

var _ periodic.Options = (*Options)(nil)

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options { return Options{Interval: DefaultInterval} }

// AddFlags implements periodic.Options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "entry-copy-interval", o.Interval, "How often each entry's snapshots are copied to the copy bucket its seed configuration declares (copy:; copy.interval overrides it; 0 turns it off and removes the BackupsCopied conditions and metrics an earlier run published).")
}

// Validate implements periodic.Options.
func (o *Options) Validate() error {
	if o.Interval < 0 {
		return fmt.Errorf("--entry-copy-interval must not be negative, got %s", o.Interval)
	}
	return nil
}

// Complete implements periodic.Options.
func (o *Options) Complete() error { return o.Validate() }
