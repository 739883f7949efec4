// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// replica is one extension process. All replicas run with the same flags and compete for the
// same leader-election lease, as the chart's replicas do.
type replica struct {
	name     string
	ext      *stack.Extension
	pprofURL string              // base URL of its /debug/pprof
	last     benchutil.MetricSet // its last scrape (kept after a kill, for the phase's deltas)
	killed   bool
}

// startExtensions starts --replicas processes with flags, each with its own folder (kubeconfig,
// log), health, metrics and pprof ports, and waits until one of them leads.
func (b *bench) startExtensions(ctx context.Context, flags ...string) error {
	b.repMu.Lock()
	b.reps = nil
	b.repMu.Unlock()
	b.mu.Lock()
	clear(b.peakRSS) // peaks are per run of the processes (names repeat after a restart)
	b.mu.Unlock()
	for i := range b.c.replicas {
		b.started++
		dir := filepath.Join(b.work, fmt.Sprintf("extension-%d", b.started))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		ports, err := stack.FreePorts(1)
		if err != nil {
			return err
		}
		args := append([]string{"--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0])}, flags...)
		args = append(args, strings.Fields(b.c.extFlags)...)
		ext, err := stack.StartExtension(ctx, b.env, b.c.binary, dir, args...)
		if err != nil {
			return err
		}
		name := "extension"
		if b.c.replicas > 1 {
			name = fmt.Sprintf("extension r%d", i+1)
		}
		b.repMu.Lock()
		b.reps = append(b.reps, &replica{name: name, ext: ext, pprofURL: fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", ports[0])})
		b.repMu.Unlock()
	}
	_, err := b.waitLeader(ctx, 250*time.Millisecond, nil)
	return err
}

func (b *bench) stopExtensions() {
	for _, r := range b.reps {
		if !r.killed {
			r.ext.Stop()
		}
	}
}

// leads says whether r holds the lease: controller-runtime's leader_election_master_status is 1
// while a process leads (absent or 0 otherwise).
func leads(ctx context.Context, r *replica) bool {
	m, err := benchutil.Scrape(ctx, r.ext.MetricsURL)
	if err != nil {
		return false
	}
	for _, v := range m.By("leader_election_master_status", "") {
		if v >= 1 {
			return true
		}
	}
	return false
}

// leader returns the replica that leads now (nil if none does).
func (b *bench) leader(ctx context.Context) *replica {
	for _, r := range b.live() {
		if leads(ctx, r) {
			return r
		}
	}
	return nil
}

// live returns the replicas not killed.
func (b *bench) live() []*replica {
	b.repMu.Lock()
	defer b.repMu.Unlock()
	var out []*replica
	for _, r := range b.reps {
		if !r.killed {
			out = append(out, r)
		}
	}
	return out
}

// waitLeader polls every interval until a live replica other than not leads.
func (b *bench) waitLeader(ctx context.Context, interval time.Duration, not *replica) (*replica, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for _, r := range b.live() {
			if r != not && leads(ctx, r) {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no extension replica took the lease within 2 minutes")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// kill SIGKILLs r (a crash: the lease is not released), after noting its peak RSS.
func (b *bench) kill(r *replica) {
	if p, err := benchutil.ReadProc(r.ext.Pid()); err == nil {
		b.notePeak(r.name, p.PeakRSSMiB)
	}
	b.repMu.Lock()
	r.killed = true
	b.repMu.Unlock()
	r.ext.Kill()
}
