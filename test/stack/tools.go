// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package stack starts the real components the tests, the demo and the benchmarks run against:
// a kube-apiserver and etcd (envtest), MinIO, and a proxy that adds network delay or throttles.
// Binaries come from hack/tools.sh, which builds them once and caches them by version.
package stack

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RepoRoot finds the repository root from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (hack/tools.sh) above the working directory")
		}
		dir = parent
	}
}

// Tool returns the path hack/tools.sh prints for a component ("envtest" or "minio"), building
// it on first use. The environment variable named env, when set, wins.
func Tool(component, env string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, "hack", "tools.sh"), component)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/tools.sh %s: %w\n%s", component, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1. The listeners are held until all are
// chosen: ports asked for one after the other can come back the same (a consumer-test etcd once
// got one port for its client and peer listeners and failed to bind).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Tmpfs returns /dev/shm where it exists (state of throw-away stand-ins kept in memory), else ""
// (the default temporary directory).
func Tmpfs() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}
