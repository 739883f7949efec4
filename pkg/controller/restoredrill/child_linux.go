package restoredrill

import (
	"fmt"
	"os/exec"
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
