// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

// DefaultProbeInterval is --bucket-probe-interval's default.
const DefaultProbeInterval = 5 * time.Minute

// ProbeOptions configure the bucket probe (a periodic.Options).
type ProbeOptions struct {
	// Interval is how often each bucket is probed (0: never; the conditions and metrics an
	// earlier run published are removed).
	Interval time.Duration
}

var _ periodic.Options = (*ProbeOptions)(nil)

// DefaultProbeOptions are the flags' defaults.
func DefaultProbeOptions() ProbeOptions { return ProbeOptions{Interval: DefaultProbeInterval} }

// AddFlags implements periodic.Options.
func (o *ProbeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "bucket-probe-interval", o.Interval, "How often each bucket is probed for the BucketAvailable condition (with up to 10% jitter; 0 turns probes off and removes the BucketAvailable conditions and metrics an earlier run published).")
}

// Validate implements periodic.Options.
func (o *ProbeOptions) Validate() error {
	if o.Interval < 0 {
		return fmt.Errorf("--bucket-probe-interval must not be negative, got %s", o.Interval)
	}
	return nil
}

// Complete implements periodic.Options.
func (o *ProbeOptions) Complete() error { return o.Validate() }
