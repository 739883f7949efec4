// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat (100 on Linux).
const clockTicks = 100

// Proc is what /proc says about one process.
type Proc struct {
	Pid  int
	Comm string
	// CPUSeconds is user plus system time so far.
	CPUSeconds float64
	// RSSMiB is the resident set now (VmRSS), PeakRSSMiB its high-water mark (VmHWM).
	RSSMiB, PeakRSSMiB float64
}

// ReadProc reads /proc/<pid>/stat and /proc/<pid>/status.
func ReadProc(pid int) (Proc, error) {
	p := Proc{Pid: pid}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after its closing parenthesis.
	s := string(stat)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return p, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	p.Comm = s[open+1 : end]
	f := strings.Fields(s[end+1:]) // f[0] is the state (field 3); utime and stime are fields 14, 15
	if len(f) < 13 {
		return p, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	p.CPUSeconds = (ut + st) / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if k == "VmRSS" {
			p.RSSMiB = kb / 1024
		} else {
			p.PeakRSSMiB = kb / 1024
		}
	}
	return p, nil
}

// Children returns the processes whose parent is pid, by command name (the first of a name wins):
// a benchmark finds its kube-apiserver, etcd, MinIO and extension this way.
func Children(pid int) map[string]int {
	out := map[string]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		if _, seen := out[s[open+1:end]]; !seen {
			out[s[open+1:end]] = child
		}
	}
	return out
}
