//go:build !linux

package restoredrill

import "os/exec"

// dieWithParent is Linux's parent-death signal; elsewhere a restore process ends on its own.
func dieWithParent(*exec.Cmd) {}
