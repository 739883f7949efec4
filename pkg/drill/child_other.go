// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package drill

import (
	"errors"
	"os/exec"
)

// dieWithParent is Linux's parent-death signal; elsewhere a restore process ends on its own.
func dieWithParent(*exec.Cmd) {}

// confineChild is Linux's no_new_privs and Landlock; elsewhere the child runs as started, and
// says so.
func confineChild(string, func() (int, error)) (string, error) {
	return "no Landlock outside Linux", nil
}

// landlockABI: Landlock is Linux's.
func landlockABI() (int, error) { return 0, errors.ErrUnsupported }

// closeInheritedOnExec is Linux's; elsewhere the child inherits what Go does not open
// close-on-exec.
func closeInheritedOnExec() error { return nil }
