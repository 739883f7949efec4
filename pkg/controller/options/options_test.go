// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package options_test

import (
	"context"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
)

func TestDeleteOptionsLeaveTimeToReport(t *testing.T) {
	cases := []struct {
		timeout                  time.Duration
		wantDeadline, wantCutoff time.Duration // before the reconcile's end
	}{
		{3 * time.Minute, 36 * time.Second, 18 * time.Second}, // gardener's default
		{8 * time.Second, 4 * time.Second, 2 * time.Second},   // the integration tests'
		{4 * time.Second, 2 * time.Second, time.Second},       // margins never take more than half
	}
	for _, c := range cases {
		t.Run(c.timeout.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			end, _ := ctx.Deadline()
			opts := options.DeletionOptions{Parallelism: 3}.DeleteOptions(ctx)
			// The margins are computed from the time left when called: allow for the call itself.
			near := func(got time.Time, want time.Duration) bool {
				d := end.Sub(got) - want
				return d > -100*time.Millisecond && d < 100*time.Millisecond
			}
			if opts.Parallelism != 3 || !near(opts.Deadline, c.wantDeadline) || !near(opts.Cutoff, c.wantCutoff) {
				t.Fatalf("deadline %v and cutoff %v before the end, parallelism %d; want %v, %v, 3",
					end.Sub(opts.Deadline), end.Sub(opts.Cutoff), opts.Parallelism, c.wantDeadline, c.wantCutoff)
			}
		})
	}
	opts := options.DeletionOptions{}.DeleteOptions(context.Background())
	if opts.Deadline.IsZero() || !opts.Deadline.Before(opts.Cutoff) {
		t.Fatalf("without a deadline: deadline %v, cutoff %v; want both set, deadline first", opts.Deadline, opts.Cutoff)
	}
}
