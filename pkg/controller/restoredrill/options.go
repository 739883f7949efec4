// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package restoredrill is the controller behind a BackupEntry's BackupsRestorable condition: on
// an interval, each entry's own slot in it, it proves that the newest backup of every etcd under
// the entry's prefix restores (pkg/drill), reading the store with the entry's own credentials
// and writing nothing there. The restore itself runs in a child process (the provider binary's
// hidden restore-drill command), so that etcd meeting a damaged snapshot in its own goroutines
// cannot crash the controller, and its memory returns after each drill. The chart runs this
// controller in a process and container of its own (pkg/app's ControllersRestoreDrill), so that
// a drill killed at its memory limit never takes the BackupBucket and BackupEntry controllers
// with it; a drill whose process was killed is reported (ReasonDrillInterrupted).
package restoredrill

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

// Defaults of the drill's flags.
const (
	DefaultInterval    = 24 * time.Hour
	DefaultConcurrency = 1
	// DefaultMaxBytes is 8 GiB: etcd's own quota is 8 GiB, and a chain of a full snapshot of
	// that size and its deltas is what a drill must read.
	DefaultMaxBytes = 8 << 30
	// DefaultReadRate is 50 MiB/s.
	DefaultReadRate   = 50 << 20
	DefaultScratchDir = ""
	// DefaultDeadline is one hour: DefaultMaxBytes at DefaultReadRate is read in under three
	// minutes, and the restore of such a chain took minutes in docs/dev/performance.md.
	DefaultDeadline = time.Hour
	// DefaultMaxDeltas is 20,000: a chain of a day's full snapshot and a delta every 20 s (the
	// shortest delta period etcd-druid sets) holds 4,320.
	DefaultMaxDeltas = 20_000
	// DefaultMaxKeys is 100,000 object versions under an entry's prefix: a few etcds' chains
	// within DefaultMaxDeltas and the snapshots etcd-backup-restore keeps; what the listing
	// holds in memory stays a few tens of MiB.
	DefaultMaxKeys = 100_000
)

// Options configure the drills of one process.
type Options struct {
	// Interval is how often each entry is drilled (0: never; what earlier drills published is
	// removed).
	Interval time.Duration
	// Concurrency is the most drills at once in the process.
	Concurrency int
	// MaxBytes caps the bytes one etcd's drill reads (0: no cap); a larger chain is Unknown
	// (TooLarge) with its size.
	MaxBytes int64
	// MaxScratchBytes caps the decompressed bytes one etcd's drill writes to ScratchDir (0: no
	// cap): the chart sets it below the emptyDir's size limit.
	MaxScratchBytes int64
	// ReadRate caps each drill's reads in bytes per second (0: none).
	ReadRate int64
	// Deadline is the most one entry's drill takes, from when it has the slot; past it the
	// drill is cut off (Unknown, CutOff), and the entry is drilled next an interval later, after
	// every entry due meanwhile.
	Deadline time.Duration
	// MaxDeltas caps the deltas of one etcd's chain; a chain with more is Unknown (TooLarge).
	MaxDeltas int
	// MaxKeys caps the object versions a drill lists under an entry's prefix; past it the drill
	// is cut off (Unknown, CutOff).
	MaxKeys int
	// ScratchDir is where drills download and restore ("": the system's temporary directory).
	ScratchDir string
}

var _ periodic.Options = (*Options)(nil)

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{Interval: DefaultInterval, Concurrency: DefaultConcurrency, MaxBytes: DefaultMaxBytes, ReadRate: DefaultReadRate, ScratchDir: DefaultScratchDir,
		Deadline: DefaultDeadline, MaxDeltas: DefaultMaxDeltas, MaxKeys: DefaultMaxKeys}
}

// AddFlags implements periodic.Options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "restore-drill-interval", o.Interval, "How often the newest backup of each entry's etcds is restored for the BackupsRestorable condition (at the entry's own slot within one interval, with up to 10% jitter; 0 turns drills off and removes the BackupsRestorable conditions, drill statuses and metrics an earlier run published).")
	fs.IntVar(&o.Concurrency, "restore-drill-concurrency", o.Concurrency, "The most restore drills at once in the process (each downloads a chain and restores it in a child process).")
	fs.Int64Var(&o.MaxBytes, "restore-drill-max-bytes", o.MaxBytes, "The most bytes one etcd's restore drill reads from the store (0: no cap); a larger chain is reported Unknown (TooLarge) with its size, never restorable.")
	fs.Int64Var(&o.MaxScratchBytes, "restore-drill-max-scratch-bytes", o.MaxScratchBytes, "The most decompressed bytes one restore drill writes to the scratch directory (0: no cap); keep it below the scratch volume's size.")
	fs.Int64Var(&o.ReadRate, "restore-drill-read-rate", o.ReadRate, "The most bytes per second a restore drill reads from the store (0: no limit).")
	fs.DurationVar(&o.Deadline, "restore-drill-deadline", o.Deadline, "The most one entry's restore drill takes once it runs; past it the drill is cut off (BackupsRestorable Unknown, CutOff) and the entry is drilled again an interval later, so that no entry holds a drill slot for longer.")
	fs.IntVar(&o.MaxDeltas, "restore-drill-max-deltas", o.MaxDeltas, "The most deltas of one etcd's chain a restore drill downloads; a longer chain is reported Unknown (TooLarge), never restorable.")
	fs.IntVar(&o.MaxKeys, "restore-drill-max-keys", o.MaxKeys, "The most object versions a restore drill lists under an entry's prefix; past it the drill is cut off (BackupsRestorable Unknown, CutOff).")
	fs.StringVar(&o.ScratchDir, "restore-drill-scratch-dir", o.ScratchDir, "Where restore drills download and restore, removed after each drill (empty: the system's temporary directory; the chart mounts a size-limited emptyDir).")
}

// Validate implements periodic.Options: the first option out of range, named by its flag.
func (o *Options) Validate() error {
	switch {
	case o.Interval < 0:
		return fmt.Errorf("--restore-drill-interval must not be negative, got %s", o.Interval)
	case o.Concurrency < 1:
		return fmt.Errorf("--restore-drill-concurrency must be at least 1, got %d", o.Concurrency)
	case o.MaxBytes < 0:
		return fmt.Errorf("--restore-drill-max-bytes must not be negative, got %d", o.MaxBytes)
	case o.MaxScratchBytes < 0:
		return fmt.Errorf("--restore-drill-max-scratch-bytes must not be negative, got %d", o.MaxScratchBytes)
	case o.ReadRate < 0:
		return fmt.Errorf("--restore-drill-read-rate must not be negative, got %d", o.ReadRate)
	case o.Deadline <= 0:
		return fmt.Errorf("--restore-drill-deadline must be positive (a drill without one can hold the drill slot for good), got %s", o.Deadline)
	case o.MaxDeltas < 1:
		return fmt.Errorf("--restore-drill-max-deltas must be at least 1, got %d", o.MaxDeltas)
	case o.MaxKeys < 1:
		return fmt.Errorf("--restore-drill-max-keys must be at least 1, got %d", o.MaxKeys)
	}
	return nil
}

// Complete implements periodic.Options.
func (o *Options) Complete() error { return o.Validate() }
