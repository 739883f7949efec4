// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// OpenStack is a running Keystone v3 and Swift all-in-one from Debian's packages
// (hack/openstack.sh). Region RegionOne offers bulk delete; region NoBulk reaches the same
// cluster through a proxy without it.
type OpenStack struct {
	AuthURL  string
	SwiftURL string
	dir      string
	script   string
}

// StartOpenStack installs (once) and starts Keystone and Swift; maxDeletes is the bulk-delete
// limit the cluster advertises (0: Swift's default of 10000).
func StartOpenStack(maxDeletes int) (*OpenStack, error) {
	root, err := stack.RepoRoot()
	if err != nil {
		return nil, err
	}
	// Swift syncs every object to disk; the throw-away cluster keeps its state in memory when
	// it can (tmpfs with user xattrs, as Swift needs), which makes it several times faster.
	dir, err := os.MkdirTemp(stack.Tmpfs(), "geb-openstack-")
	if err != nil {
		return nil, err
	}
	if maxDeletes == 0 {
		maxDeletes = 10000
	}
	o := &OpenStack{dir: dir, script: filepath.Join(root, "hack", "openstack.sh")}
	var out, errOut bytes.Buffer
	cmd := exec.Command("bash", o.script, "start", dir, fmt.Sprint(maxDeletes))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		o.Stop()
		return nil, fmt.Errorf("hack/openstack.sh start: %w\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != 2 {
		o.Stop()
		return nil, fmt.Errorf("hack/openstack.sh start printed %q", out.String())
	}
	o.AuthURL, o.SwiftURL = fields[0], fields[1]
	return o, nil
}

// Stop ends the services and removes their state.
func (o *OpenStack) Stop() {
	_ = exec.Command("bash", o.script, "stop", o.dir).Run()
	_ = os.RemoveAll(o.dir)
}

// SecretData is an openstack credentials secret for a project's member user ("demo" or
// "other"), in region RegionOne.
func (o *OpenStack) SecretData(project string) map[string][]byte {
	return map[string][]byte{
		"authURL":    []byte(o.AuthURL),
		"domainName": []byte("Default"),
		"tenantName": []byte(project),
		"username":   []byte(project),
		"password":   []byte(project + "pass"),
		"region":     []byte("RegionOne"),
	}
}
