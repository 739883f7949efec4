// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package restoredrill is the controller behind a BackupEntry's BackupsRestorable condition: on
// an interval, each entry's own slot in it, it proves that the newest backup of every etcd under
// the entry's prefix restores (pkg/drill), reading the store with the entry's own credentials
// and writing nothing there. The restore itself runs in a child process (the provider binary's
// hidden restore-drill command), so that etcd meeting a damaged snapshot in its own goroutines
// cannot crash the controller, and its memory returns after each drill.
package restoredrill

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
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
	// ScratchDir is where drills download and restore ("": the system's temporary directory).
	ScratchDir string
	// Clock is the time source (nil: the real clock).
	Clock clock.PassiveClock
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{Interval: DefaultInterval, Concurrency: DefaultConcurrency, MaxBytes: DefaultMaxBytes, ReadRate: DefaultReadRate, ScratchDir: DefaultScratchDir}
}

// Validate reports the first option out of range, named by its flag.
func (o Options) Validate() error {
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
	}
	return nil
}

// Now is the clock's time.
func (o Options) Now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}
