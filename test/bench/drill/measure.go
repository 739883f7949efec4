// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
)

// job is what the orchestrator hands the measuring process on stdin.
type job struct {
	Secret  map[string][]byte `json:"secret"`
	Region  string            `json:"region"`
	Bucket  string            `json:"bucket"`
	Prefix  string            `json:"prefix"`
	Scratch string            `json:"scratch"`
}

// measurement is what the measuring process reports on stdout.
type measurement struct {
	RawBytes   int64         `json:"rawBytes"`
	RawTime    time.Duration `json:"rawTime"`
	RawPeakKiB int64         `json:"rawPeakKiB"`
	// RawParTime is the raw read of the same objects at the drill's parallelism: the full
	// snapshot and the deltas beside it, drill.DefaultFetchers at once.
	RawParTime time.Duration
	// RawFullTime is the raw read's time for the full snapshot alone; FullFetchTime the
	// download side's for a chain of the full snapshot alone (measured after the drill).
	RawFullTime, FullFetchTime time.Duration
	FullBytes                  int64
	// DrillTime is the drill as the controller runs it (drill.FetchAndRestore, the restore in
	// a child, overlapping); FetchTime its download side alone (the deltas drained, not
	// restored), measured after it.
	FetchTime, DrillTime time.Duration
	// ChildFullRestored is when the child stood on the restored full snapshot (from its start,
	// which is when the full snapshot was downloaded); ChildDeltaWait how long it then waited for
	// deltas.
	ChildFullRestored, ChildDeltaWait time.Duration
	BytesRead                         int64 `json:"bytesRead"`
	Revision, Keys                    int64
	Deltas                            int
	// FetchPeakKiB is this process's peak RSS during the drill (VmHWM, reset before it);
	// ChildPeakKiB the restore child's (its rusage).
	FetchPeakKiB, ChildPeakKiB int64
	// ChildPeakAnonKiB and ChildPeakFileKiB are the child's largest RssAnon (heap, stacks) and
	// RssFile (the restored database's pages mapped by bbolt: page cache), sampled every 20 ms.
	ChildPeakAnonKiB, ChildPeakFileKiB int64
	Err                                string `json:"err,omitempty"`
}

// measure runs in its own process, so that its peak RSS is the drill's and not the generator's:
// it reads every object of the chain through the aws DataPlane's OpenObject to io.Discard (the
// raw rate), then drills the chain as the restoredrill controller does: drill.FetchAndRestore
// here, the restore in a child process (this binary's restore-drill command, RunChild).
func measure(ctx context.Context, in io.Reader, out io.Writer) error {
	var j job
	if err := json.NewDecoder(in).Decode(&j); err != nil {
		return err
	}
	var m measurement
	report := func(err error) error {
		if err != nil {
			m.Err = err.Error()
		}
		return json.NewEncoder(out).Encode(m)
	}
	store, err := (&awsprovider.Provider{}).NewDataPlane(ctx, provider.Credentials{Data: j.Secret, Region: j.Region})
	if err != nil {
		return report(err)
	}
	chains, err := drill.Collect(ctx, store, j.Bucket, j.Prefix)
	if err != nil {
		return report(err)
	}
	if len(chains) != 1 || chains[0].Full == nil {
		return report(fmt.Errorf("want one chain under %s, found %d", j.Prefix, len(chains)))
	}
	ch := chains[0]

	// Raw: the same objects, the same data plane, the same order, one at a time.
	resetPeak()
	start := time.Now()
	for i, s := range append([]drill.Snapshot{*ch.Full}, ch.Deltas...) {
		rc, err := store.OpenObject(ctx, j.Bucket, s.Key, s.Version)
		if err != nil {
			return report(err)
		}
		n, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return report(err)
		}
		m.RawBytes += n
		if i == 0 {
			m.RawFullTime, m.FullBytes = time.Since(start), n
		}
	}
	m.RawTime = time.Since(start)
	m.RawPeakKiB = procStatus("VmHWM:")
	// Raw at the drill's parallelism: the full snapshot and, beside it, the deltas 4 at a time.
	if m.RawParTime, err = rawParallel(ctx, store, j.Bucket, ch, drill.DefaultFetchers); err != nil {
		return report(err)
	}

	child, err := drill.SelfRestorer()
	if err != nil {
		return report(err)
	}
	// The drill as the controller runs it: the download here, the restore in a child, overlapping.
	dir, err := os.MkdirTemp(j.Scratch, "drill-")
	if err != nil {
		return report(err)
	}
	defer os.RemoveAll(dir)
	resetPeak()
	stop := sampleChild(&m)
	start = time.Now()
	r := drill.FetchAndRestore(ctx, store, j.Bucket, ch, dir, drill.Options{}, child.Restore)
	m.DrillTime = time.Since(start)
	stop()
	m.FetchPeakKiB = procStatus("VmHWM:")
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		m.ChildPeakKiB = ru.Maxrss
	}
	m.BytesRead, m.Revision, m.Keys, m.Deltas = r.BytesRead, r.Revision, r.Keys, len(ch.Deltas)
	m.ChildFullRestored, m.ChildDeltaWait = r.FullRestored, r.DeltaWait
	if r.Err != nil {
		return report(r.Err)
	}
	// The controller's side alone: the same download, the deltas drained instead of restored.
	if m.FetchTime, err = fetchOnly(ctx, store, j, ch); err != nil {
		return report(err)
	}
	m.FullFetchTime, err = fetchOnly(ctx, store, j, drill.Chain{Etcd: ch.Etcd, Full: ch.Full})
	return report(err)
}

// rawParallel reads ch's objects to io.Discard as the drill downloads them: the full snapshot
// and, beside it, the deltas n at a time.
func rawParallel(ctx context.Context, store objectstore.DataPlane, bucket string, ch drill.Chain, n int) (time.Duration, error) {
	start := time.Now()
	read := func(key string) error {
		rc, err := store.OpenObject(ctx, bucket, key, "")
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(io.Discard, rc)
		return err
	}
	errs := make(chan error, n+1)
	keys := make(chan string)
	go func() { errs <- read(ch.Full.Key) }()
	for range n {
		go func() {
			var first error
			for k := range keys {
				if err := read(k); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for _, d := range ch.Deltas {
		keys <- d.Key
	}
	close(keys)
	var first error
	for range n + 1 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return time.Since(start), first
}

// fetchOnly times drill.FetchAndRestore of ch with a restore that only drains the deltas: the
// controller's side of the drill (download, verification, decompression) alone.
func fetchOnly(ctx context.Context, store objectstore.DataPlane, j job, ch drill.Chain) (time.Duration, error) {
	dir, err := os.MkdirTemp(j.Scratch, "fetch-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	r := drill.FetchAndRestore(ctx, store, j.Bucket, ch, dir, drill.Options{}, func(_ context.Context, ch drill.Chain, _ string, deltas *os.File) drill.Result {
		if _, err := io.Copy(io.Discard, deltas); err != nil {
			return drill.Result{Err: err}
		}
		return drill.Result{Revision: ch.LastRevision()}
	})
	if r.Err != nil {
		return 0, fmt.Errorf("fetching %s alone: %w", ch.Etcd, r.Err)
	}
	return time.Since(start), nil
}

// sampleChild samples the resident memory of this process's children (the restore child) until
// stop is called.
func sampleChild(m *measurement) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			for _, pid := range benchutil.Children(os.Getpid()) {
				status := fmt.Sprintf("/proc/%d/status", pid)
				m.ChildPeakAnonKiB = max(m.ChildPeakAnonKiB, statusField(status, "RssAnon:"))
				m.ChildPeakFileKiB = max(m.ChildPeakFileKiB, statusField(status, "RssFile:"))
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}

// resetPeak resets this process's VmHWM to its current RSS.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatus is a field of /proc/self/status in KiB.
func procStatus(field string) int64 { return statusField("/proc/self/status", field) }

// statusField is a field of a /proc/<pid>/status file in KiB (0 if it cannot be read).
func statusField(path, field string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
