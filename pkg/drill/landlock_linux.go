// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The restore child's Landlock ruleset (Documentation/userspace-api/landlock.rst of the kernel;
// the system calls through golang.org/x/sys/unix). Every right of the ABI's that this code knows
// is handled, so denied unless a rule below grants it.

// Filesystem rights by the Landlock ABI that brought them.
const (
	fsRightsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// scratchRights are what etcd's restore and the embedded etcd do in the chain's directory:
	// read and remove full.db, create, write, truncate, rename and remove the data directory's
	// files and directories. No executing, no devices, sockets, FIFOs or symbolic links.
	scratchRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// landlockRuleNetPort and landlockNetPortAttr are the kernel's LANDLOCK_RULE_NET_PORT and
// struct landlock_net_port_attr (ABI 4), which golang.org/x/sys/unix does not define.
const landlockRuleNetPort = 2

type landlockNetPortAttr struct {
	AllowedAccess uint64
	Port          uint64
}

// childReadOnly are the files outside its directory the restore child may read, each because
// the restore reads it after the child is confined (seen with strace on a real restore through
// the child: TestChildRestoresARealChainConfined):
var childReadOnly = []string{
	// Go's resolver, for the embedded etcd's "localhost" URLs (startEmbedded).
	"/etc/hosts", "/etc/nsswitch.conf", "/etc/resolv.conf",
	// Go's net.Listen: the listen backlog.
	"/proc/sys/net/core/somaxconn",
	// The Go runtime as the re-executed image starts: huge page size, and the cgroup's CPU
	// limit for GOMAXPROCS (/proc/self is the child's own: the pid survives the exec).
	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "/proc/self/cgroup", "/proc/self/mountinfo",
}

// childReadOnlyTrees are directories beneath which the child may read files (not list them): the
// cgroup filesystem, whose files the runtime reads for GOMAXPROCS (which ones depends on cgroup
// v1 or v2 and the pod's cgroup).
var childReadOnlyTrees = []string{"/sys/fs/cgroup"}

// landlockABI is the kernel's Landlock ABI version, or why it has none.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// restrictTo restricts the calling thread (and what it starts or executes) with Landlock ABI abi
// to: everything of scratchRights beneath dir; executing the running binary (and reading its
// ELF interpreter's directory and /etc/ld.so.cache when it is linked dynamically, as a cgo
// build is); reading childReadOnly and childReadOnlyTrees (what does not exist is skipped).
// With ABI 4 no TCP connect and no TCP bind but to an ephemeral port (port 0: the embedded
// etcd's localhost:0); with ABI 6 no signal to and no abstract unix socket of a process outside
// the child.
func restrictTo(dir string, abi int) error {
	handledFS := fsRightsForABI(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS}
	if abi >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("creating the ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	if err := allowBeneath(ruleset, dir, scratchRights&handledFS, true); err != nil {
		return err
	}
	if err := allowBeneath(ruleset, selfExecutable, unix.LANDLOCK_ACCESS_FS_EXECUTE|unix.LANDLOCK_ACCESS_FS_READ_FILE, true); err != nil {
		return err
	}
	if interp, err := interpreter(selfExecutable); err != nil {
		return err
	} else if interp != "" {
		if err := allowBeneath(ruleset, filepath.Dir(interp), unix.LANDLOCK_ACCESS_FS_EXECUTE|unix.LANDLOCK_ACCESS_FS_READ_FILE, true); err != nil {
			return err
		}
		if err := allowBeneath(ruleset, "/etc/ld.so.cache", unix.LANDLOCK_ACCESS_FS_READ_FILE, false); err != nil {
			return err
		}
	}
	for _, path := range childReadOnly {
		if err := allowBeneath(ruleset, path, unix.LANDLOCK_ACCESS_FS_READ_FILE, false); err != nil {
			return err
		}
	}
	for _, path := range childReadOnlyTrees {
		if err := allowBeneath(ruleset, path, unix.LANDLOCK_ACCESS_FS_READ_FILE, false); err != nil {
			return err
		}
	}
	if abi >= 4 {
		port := landlockNetPortAttr{AllowedAccess: unix.LANDLOCK_ACCESS_NET_BIND_TCP, Port: 0}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), landlockRuleNetPort, uintptr(unsafe.Pointer(&port)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("allowing TCP bind to an ephemeral port: %w", errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restricting the process: %w", errno)
	}
	return nil
}

// fsRightsForABI are the filesystem rights ABI abi has and this code knows (up to ABI 7; rights
// of later ABIs stay unhandled, so allowed).
func fsRightsForABI(abi int) uint64 {
	rights := uint64(fsRightsABI1)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return rights
}

// allowBeneath grants rights on path (a file: on it; a directory: on everything beneath it).
// A path that does not exist is an error only when required.
func allowBeneath(ruleset int, path string, rights uint64, required bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("opening %s for a rule: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights // the kernel refuses directory rights on a file
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("allowing %s: %w", path, errno)
	}
	return nil
}

// fileRights are the rights a rule on a file (not a directory) may grant.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// interpreter is the ELF interpreter (dynamic loader) of the binary at path, resolved; "" for a
// static binary (CGO_ENABLED=0, as the image is built).
func interpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading the binary's ELF header: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return "", fmt.Errorf("reading the binary's interpreter: %w", err)
		}
		interp, err := filepath.EvalSymlinks(string(b[:max(len(b)-1, 0)])) // NUL-terminated
		if err != nil {
			return "", fmt.Errorf("resolving the binary's interpreter: %w", err)
		}
		return interp, nil
	}
	return "", nil
}
