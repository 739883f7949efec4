package restoredrill

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the restore process when the controller's process dies:
// no restore outlives the process that would read its result.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
