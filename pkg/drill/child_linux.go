// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent makes the kernel kill the restore process when the controller's process dies:
// no restore outlives the process that would read its result.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// childArg0 starts the argv[0] with which a restore child re-executes itself once confined:
// the new image reads from it that its confinement is done, and whether Landlock is part of it
// (" unconfined: " and why not). Not an argument (the command line is the binary's to parse),
// not a variable (the environment stays empty); ps shows it.
const (
	childArg0      = "restore-drill-confined"
	unconfinedArg0 = " unconfined: "
	selfExecutable = "/proc/self/exe"
)

// confineChild confines the restore process to dir before it reads its job, and returns why it
// runs without Landlock ("" : with). no_new_privs first (executing a set-user-ID or
// file-capability program gains nothing; Landlock requires it), then Landlock where abi says the
// kernel has it (restrictTo: dir read-write, a few files read-only, no TCP but binding an
// ephemeral port). Both hold for the thread that sets them and the threads and programs it
// starts, and a Go process has several threads already: so they are set on one locked thread,
// which then re-executes the binary (selfExecutable, the very file running) with childArg0 as
// argv[0]. The new image, every one of its threads, starts confined; its confineChild only reads
// argv[0].
//
// A kernel without Landlock (abi fails: ENOSYS, EOPNOTSUPP when disabled at boot, EPERM under a
// seccomp filter) is no reason to stop drilling: the child runs with no_new_privs only and says
// so. Landlock that is there but fails to restrict is an error: the drill proves nothing rather
// than run less confined than it says.
func confineChild(dir string, abi func() (int, error)) (string, error) {
	if rest, ok := strings.CutPrefix(os.Args[0], childArg0); ok {
		unconfined, _ := strings.CutPrefix(rest, unconfinedArg0)
		return unconfined, nil
	}
	runtime.LockOSThread() // never unlocked: this thread is confined and execs
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "", fmt.Errorf("setting no_new_privs on the restore process: %w", err)
	}
	arg0 := childArg0
	if version, err := abi(); err != nil {
		arg0 += unconfinedArg0 + fmt.Sprintf("the kernel offers no Landlock (%v)", err)
	} else if err := restrictTo(dir, version); err != nil {
		return "", fmt.Errorf("confining the restore process to %s with Landlock (ABI %d): %w", dir, version, err)
	}
	err := unix.Exec(selfExecutable, append([]string{arg0}, os.Args[1:]...), os.Environ())
	return "", fmt.Errorf("re-executing the confined restore process: %w", err)
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
