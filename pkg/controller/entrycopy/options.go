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

// passDeadline bounds the start of one pass's snapshots (connect.CopyPassDeadline); a snapshot
// streamed at that moment goes on (passOptions).
const passDeadline = connect.CopyPassDeadline

// DefaultWorkers is --entry-copy-workers' default: a snapshot copied past its pass's deadline
// holds its worker until it ends, so that one entry's large snapshot leaves the others workers.
const DefaultWorkers = 4

// Options configure the entry copy (a periodic.Options).
type Options struct {
	// Interval is how often each entry is copied where its bucket's seed configuration declares
	// a copy (copy.interval overrides it per seed; 0: never, and what an earlier run published is
	// removed).
	Interval time.Duration
	// Workers is how many entries are copied at once (--entry-copy-workers). Each pass holds at
	// most replication.DefaultMaxBufferBytes of write buffers. At most Workers-1 (at least one)
	// passes go on past their deadline at once (overtimeSlots).
	Workers int
	// PassDeadline, for tests only (no flag), shortens the pass's deadline (0:
	// connect.CopyPassDeadline; never longer: an entry's deletion waits that long).
	PassDeadline time.Duration
}

// deadline is the deadline of o's passes.
func (o Options) deadline() time.Duration {
	if o.PassDeadline > 0 && o.PassDeadline < passDeadline {
		return o.PassDeadline
	}
	return passDeadline
}

var _ periodic.Options = (*Options)(nil)

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options { return Options{Interval: DefaultInterval, Workers: DefaultWorkers} }

// AddFlags implements periodic.Options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "entry-copy-interval", o.Interval, "How often each entry's snapshots are copied to the copy bucket its seed configuration declares (copy:; copy.interval overrides it; 0 turns it off and removes the BackupsCopied conditions and metrics an earlier run published).")
	fs.IntVar(&o.Workers, "entry-copy-workers", o.Workers, "How many entries' snapshots are copied at once. A snapshot still being copied at its pass's 2-minute deadline holds its worker until it ends (at most workers - 1, at least 1, at once; others are cut off at the deadline); each worker's pass holds at most 128 MiB of write buffers.")
}

// Validate implements periodic.Options.
func (o *Options) Validate() error {
	if o.Interval < 0 {
		return fmt.Errorf("--entry-copy-interval must not be negative, got %s", o.Interval)
	}
	if o.Workers < 1 {
		return fmt.Errorf("--entry-copy-workers must be at least 1, got %d", o.Workers)
	}
	return nil
}

// Complete implements periodic.Options.
func (o *Options) Complete() error { return o.Validate() }
