// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent makes the kernel kill the restore process when the controller's process dies:
// no restore outlives the process that would read its result.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// confineChild sets no_new_privs on the restore process (inherited by anything it starts):
// executing a set-user-ID or file-capability binary no longer raises privileges. It needs no
// privilege itself.
func confineChild() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs on the restore process: %w", err)
	}
	return nil
}

// closeInheritedOnExec marks every file descriptor of the controller's process from 3 on
// close-on-exec. Go opens its own that way, but descriptors the process inherited from whatever
// started it are not, and a started child would inherit them in turn; ExtraFiles are passed
// whatever their flag (os/exec dups them).
func closeInheritedOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing the controller's file descriptors: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd) // the listing's own descriptor, closed meanwhile, answers EBADF
		}
	}
	return nil
}
