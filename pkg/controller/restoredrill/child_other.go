// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package restoredrill

import "os/exec"

// dieWithParent is Linux's parent-death signal; elsewhere a restore process ends on its own.
func dieWithParent(*exec.Cmd) {}

// confineChild is Linux's no_new_privs; elsewhere the child runs as started.
func confineChild() error { return nil }

// closeInheritedOnExec is Linux's; elsewhere the child inherits what Go does not open
// close-on-exec.
func closeInheritedOnExec() error { return nil }
