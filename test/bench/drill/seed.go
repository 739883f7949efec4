// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// The seed-scale mode (--entries): many entries, each with a small chain, drilled one after the
// other as the controller drills them at --restore-drill-concurrency=1 with its default budget
// (the read rate 50 MiB/s included), each chain listed, downloaded and restored in a child
// through the same functions as the restoredrill controller (Collect, DrillChain with
// ChildRestorer). Requests are counted by the proxy, CPU is the measuring process's rusage with
// its children's.

const seedCommand = "seed"

// seedJob is what the orchestrator hands the measuring process in the seed mode.
type seedJob struct {
	Secret   map[string][]byte `json:"secret"`
	Region   string            `json:"region"`
	Bucket   string            `json:"bucket"`
	Prefixes []string          `json:"prefixes"`
	Scratch  string            `json:"scratch"`
}

// seedMeasurement is what the measuring process reports in the seed mode.
type seedMeasurement struct {
	Entries, Restored, Chains, Deltas int
	BytesRead                         int64
	Wall                              time.Duration
	// UserCPU and SysCPU are the measuring process's and its children's (the restores').
	UserCPU, SysCPU, ChildUserCPU, ChildSysCPU time.Duration
	PeakKiB, ChildPeakKiB                      int64
	Err                                        string `json:"err,omitempty"`
}

func measureSeed(ctx context.Context, in io.Reader, out io.Writer) error {
	var j seedJob
	if err := json.NewDecoder(in).Decode(&j); err != nil {
		return err
	}
	var m seedMeasurement
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
	child, err := drill.SelfRestorer()
	if err != nil {
		return report(err)
	}
	defaults := restoredrill.DefaultOptions()
	opts := drill.Options{ScratchDir: j.Scratch, MaxBytes: defaults.MaxBytes, MaxScratchBytes: defaults.MaxScratchBytes, ReadRate: defaults.ReadRate, Restore: child.Restore}
	resetPeak()
	start := time.Now()
	for _, prefix := range j.Prefixes {
		chains, err := drill.Collect(ctx, store, j.Bucket, prefix)
		if err != nil {
			return report(err)
		}
		m.Entries++
		for _, ch := range chains {
			r := drill.DrillChain(ctx, store, j.Bucket, ch, opts) // as the controller's drill.Drill
			m.Chains++
			m.Deltas += len(ch.Deltas)
			m.BytesRead += r.BytesRead
			if r.Err != nil {
				return report(fmt.Errorf("%s: %w", prefix, r.Err))
			}
			if r.Revision == ch.LastRevision() {
				m.Restored++
			}
		}
	}
	m.Wall = time.Since(start)
	m.PeakKiB = procStatus("VmHWM:")
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	m.UserCPU, m.SysCPU = tv(self.Utime), tv(self.Stime)
	m.ChildUserCPU, m.ChildSysCPU, m.ChildPeakKiB = tv(kids.Utime), tv(kids.Stime), kids.Maxrss
	return report(nil)
}

func tv(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }

// runSeed writes one chain of entryMiB and entryDeltas, copies it (server-side) to entries
// entries, and drills them all in a measuring process behind the counting proxy.
func runSeed(ctx context.Context, s3c *s3.Client, p *proxy, secret map[string][]byte, region, bucket, work string, entries, entryMiB, entryDeltas int) error {
	first := "shoot--seed--0000--1/etcd-main/v2/"
	began := time.Now()
	c, err := generate(ctx, s3c, bucket, first, work, entryMiB, entryDeltas)
	if err != nil {
		return err
	}
	var keys []string
	list, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &first})
	if err != nil {
		return err
	}
	for _, o := range list.Contents {
		keys = append(keys, *o.Key)
	}
	if len(keys) != entryDeltas+1 {
		return fmt.Errorf("wrote %d objects under %s, want %d (one listing page holds 1,000)", len(keys), first, entryDeltas+1)
	}
	prefixes := []string{"shoot--seed--0000--1/"}
	work2 := make(chan string, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var copyErr error
	for range 8 {
		wg.Go(func() {
			for dst := range work2 {
				for _, k := range keys {
					src := bucket + "/" + k
					key := dst + strings.TrimPrefix(k, "shoot--seed--0000--1/")
					if _, err := s3c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: &key, CopySource: &src}); err != nil {
						mu.Lock()
						copyErr = err
						mu.Unlock()
					}
				}
			}
		})
	}
	for i := 1; i < entries; i++ {
		prefix := fmt.Sprintf("shoot--seed--%04d--1/", i)
		prefixes = append(prefixes, prefix)
		work2 <- prefix
	}
	close(work2)
	wg.Wait()
	if copyErr != nil {
		return copyErr
	}
	fmt.Fprintf(os.Stderr, "wrote %d entries of a %d-byte full snapshot and %d deltas (%d bytes each) in %s\n", entries, c.fullSize, c.deltas, c.bytes, time.Since(began).Round(time.Second))

	scratch, err := os.MkdirTemp(work, "scratch-")
	if err != nil {
		return err
	}
	in, err := json.Marshal(seedJob{Secret: secret, Region: region, Bucket: bucket, Prefixes: prefixes, Scratch: scratch})
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	gets, lists, others, bytesOut := p.gets.Load(), p.lists.Load(), p.others.Load(), p.bytesOut.Load()
	var outBuf, errOut bytes.Buffer
	cmd := exec.Command(self, seedCommand)
	cmd.Env = os.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &outBuf, &errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("measuring: %w\n%s", err, errOut.String())
	}
	var m seedMeasurement
	if err := json.Unmarshal(outBuf.Bytes(), &m); err != nil {
		return fmt.Errorf("measuring: %w: %s\n%s", err, outBuf.String(), errOut.String())
	}
	if m.Err != "" {
		return fmt.Errorf("measuring: %s", m.Err)
	}
	gets, lists, others, bytesOut = p.gets.Load()-gets, p.lists.Load()-lists, p.others.Load()-others, p.bytesOut.Load()-bytesOut
	if m.Restored != entries || m.BytesRead != int64(entries)*c.bytes {
		return fmt.Errorf("restored %d of %d entries reading %d bytes, want %d", m.Restored, entries, m.BytesRead, int64(entries)*c.bytes)
	}
	cpu := m.UserCPU + m.SysCPU + m.ChildUserCPU + m.ChildSysCPU
	n := float64(entries)
	fmt.Printf("| entries | chain each (full, deltas, bytes) | wall | per entry | GET object | list | other requests | bytes read | bytes through the proxy | CPU parent (user+sys) | CPU restore children (user+sys) | CPU per entry | peak RSS parent | peak RSS child |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Printf("| %d | %.1f MiB, %d, %.1f MiB | %s | %.0f ms | %d | %d | %d | %.0f MiB | %.0f MiB | %.1f s | %.1f s | %.0f ms | %.0f MiB | %.0f MiB |\n",
		entries, mibOf(c.fullSize), c.deltas, mibOf(c.bytes), m.Wall.Round(time.Second), float64(m.Wall.Milliseconds())/n,
		gets, lists, others, mibOf(m.BytesRead), mibOf(bytesOut), (m.UserCPU + m.SysCPU).Seconds(), (m.ChildUserCPU + m.ChildSysCPU).Seconds(),
		float64(cpu.Milliseconds())/n, float64(m.PeakKiB)/1024, float64(m.ChildPeakKiB)/1024)
	return nil
}
