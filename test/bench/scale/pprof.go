// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// profile is one saved pprof profile, printed later (profiles are taken while a phase runs,
// printed with its report).
type profile struct {
	title, file, binary, sampleIndex string
	err                              error
}

// heapProfile saves r's /debug/pprof/heap as <work>/<label>-heap-<replica>.pb.gz.
func (b *bench) heapProfile(ctx context.Context, r *replica, label string) profile {
	p := profile{title: fmt.Sprintf("%s: heap of %s (inuse_space)", label, r.name), binary: b.c.binary, sampleIndex: "inuse_space",
		file: filepath.Join(b.work, fmt.Sprintf("%s-heap-%s.pb.gz", label, strings.ReplaceAll(r.name, " ", "-")))}
	body, err := stack.Get(ctx, r.pprofURL+"/heap")
	if err == nil {
		err = os.WriteFile(p.file, []byte(body), 0o644)
	}
	p.err = err
	return p
}

// cpuProfiles takes a 20 s CPU profile of r and, at the same time, of kube-apiserver; the
// returned func waits for both.
func (b *bench) cpuProfiles(ctx context.Context, r *replica, label string) func() []profile {
	out := make([]profile, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		p := profile{title: fmt.Sprintf("%s: 20 s CPU profile of %s", label, r.name), binary: b.c.binary,
			file: filepath.Join(b.work, fmt.Sprintf("%s-cpu-%s.pb.gz", label, strings.ReplaceAll(r.name, " ", "-")))}
		body, err := stack.Get(ctx, r.pprofURL+"/profile?seconds=20")
		if err == nil {
			err = os.WriteFile(p.file, []byte(body), 0o644)
		}
		p.err = err
		out[0] = p
	})
	wg.Go(func() {
		p := profile{title: label + ": 20 s CPU profile of kube-apiserver", binary: kubeAPIServerBinary(),
			file: filepath.Join(b.work, label+"-cpu-kube-apiserver.pb.gz")}
		body, err := b.apiserver.get(ctx, "/debug/pprof/profile?seconds=20")
		if err == nil {
			err = os.WriteFile(p.file, body, 0o644)
		}
		p.err = err
		out[1] = p
	})
	return func() []profile {
		wg.Wait()
		return out
	}
}

// print prints the top 15 of the profile with `go tool pprof -top` (works offline).
func (p profile) print() {
	fmt.Printf("%s (%s):\n", p.title, p.file)
	if p.err != nil {
		fmt.Printf("  NOT taken: %v\n", p.err)
		return
	}
	args := []string{"tool", "pprof", "-top", "-nodecount=15"}
	if p.sampleIndex != "" {
		args = append(args, "-sample_index="+p.sampleIndex)
	}
	if p.binary != "" {
		args = append(args, p.binary)
	}
	out, err := exec.Command("go", append(args, p.file)...).CombinedOutput()
	if err != nil {
		fmt.Printf("  go tool pprof failed: %v: %s\n", err, out)
		return
	}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		fmt.Println("  " + line)
	}
}
