// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ChildRestorer runs each restore in a new process: Path with Args (the provider binary and
// ChildCommandName), so that a snapshot etcd cannot handle crashes that process, not the
// controller, and the restore's memory is returned when it exits.
//
// The child parses databases whose bytes a shoot controls, so it gets only what the restore
// needs: an empty environment (none of the controller's variables: no KUBECONFIG, no cloud
// credentials a deployment may set), the scratch directory as its working directory, and file
// descriptors 0 (the job), 1 and 2 (pipes the parent reads) and 3 (the deltas); every other
// descriptor of the controller is close-on-exec (closeInheritedOnExec). Before it reads anything
// it sets no_new_privs and, where the kernel offers Landlock, restricts its own file access to
// the scratch directory and what etcd and Go read (confineChild, restrictTo); where it
// does not, the child runs without and says so (Result.Unconfined). It keeps the controller's
// uid.
//
// A child that crashes (a panic, a fatal error: etcd failing on the verified data) is
// RestoreFailed. A child killed by a signal (SIGKILL: out of memory, most likely: ErrRestoreKilled),
// one that cannot be started, one that could not confine itself, or one cut off by ctx proves nothing
// about the backup: its error is no finding.
type ChildRestorer struct {
	Path string
	Args []string
	// Env is the child's whole environment (nil: empty; never the parent's).
	Env []string
}

// SelfRestorer re-executes the running binary with ChildCommandName.
func SelfRestorer() (ChildRestorer, error) {
	exe, err := os.Executable()
	if err != nil {
		return ChildRestorer{}, fmt.Errorf("finding the extension's binary for restore drills: %w", err)
	}
	return ChildRestorer{Path: exe, Args: []string{ChildCommandName}}, nil
}

// ErrRestoreKilled is the error of a restore whose child process was killed (SIGKILL: the
// kernel's OOM killer at the container's memory limit, most likely): no finding about the backup.
var ErrRestoreKilled = errors.New("restore process killed")

// maxChildOutput bounds what is kept of the child's stdout and stderr.
const maxChildOutput = 64 << 10

// Restore is a StreamRestorer: the child gets the job on stdin and deltas as its file
// descriptor 3.
func (c ChildRestorer) Restore(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
	r := newResult(ch)
	defer func() { r.Duration = time.Since(r.Started) }()
	if ch.Full == nil {
		r.Err = newError(ReasonNoFullSnapshot, "", nil, "no full snapshot of %s to restore", ch.Etcd)
		return r
	}
	job, err := json.Marshal(childJob{Dir: dir, Etcd: ch.Etcd, Full: *ch.Full, Deltas: ch.Deltas})
	if err != nil {
		r.Err = err
		return r
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would be the controller's own environment
	}
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(job)
	cmd.ExtraFiles = []*os.File{deltas}
	stdout, stderr := &capped{max: maxChildOutput}, &capped{max: maxChildOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	dieWithParent(cmd)
	if err := closeInheritedOnExec(); err != nil {
		r.Err = err
		return r
	}
	runErr := cmd.Run()
	var res childResult
	parsed := json.Unmarshal(lastLine(stdout.Bytes()), &res) == nil
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Err = fmt.Errorf("restore process stopped: %w", ctx.Err())
	case runErr == nil && parsed:
		r.Revision, r.Keys, r.FullRestored, r.DeltaWait = res.Revision, res.Keys, res.FullRestored, res.DeltaWait
		r.Unconfined = res.Unconfined
		switch {
		case res.Reason != "":
			if r.Err = NewFinding(res.Reason, res.Key, res.Detail); r.Err == nil {
				r.Err = fmt.Errorf("restore process reported an unknown reason %q: %s", res.Reason, res.Detail)
			}
		case res.Error != "":
			r.Err = fmt.Errorf("restore process: %s", res.Error)
		}
	case errors.As(runErr, &exit) && killed(exit):
		r.Err = fmt.Errorf("%w by SIGKILL (out of memory, most likely); nothing proven about the backup", ErrRestoreKilled)
	case errors.As(runErr, &exit):
		r.Err = newError(ReasonRestoreFailed, ch.Full.Key, nil,
			"the restore process crashed on the verified snapshots (%s): %s", exit.ProcessState, crashLine(stderr.Bytes()))
	case runErr != nil:
		r.Err = fmt.Errorf("starting the restore process: %w", runErr)
	default:
		r.Err = fmt.Errorf("restore process exited without a result")
	}
	return r
}

// killed reports whether the child was ended by SIGKILL (the kernel's OOM killer, or an
// operator): no verdict on the backup.
func killed(exit *exec.ExitError) bool {
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// crashLine is the line of the child's stderr that says why it crashed (Go's "panic:" or "fatal
// error:"), else its last line; cut to 300 bytes.
func crashLine(stderr []byte) string {
	var found, last string
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 0, 4096), maxChildOutput)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		last = line
		if found == "" && (strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:")) {
			found = line
		}
	}
	if found == "" {
		found = last
	}
	if found == "" {
		return "no output"
	}
	if len(found) > 300 {
		found = found[:300] + " [...]"
	}
	return found
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// capped keeps the first max bytes written to it (the result line comes first and alone on
// stdout; the reason of a crash early on stderr).
type capped struct {
	max int
	buf bytes.Buffer
}

func (t *capped) Write(p []byte) (int, error) {
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *capped) Bytes() []byte { return t.buf.Bytes() }
