// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// ChildCommandName is the provider binary's hidden command that restores one fetched chain.
const ChildCommandName = "restore-drill"

// Restorer restores a chain whose full snapshot drill.FetchAndRestore left in dir (verified)
// and whose deltas it sends on deltas, as drill.RestoreStream does (drill.StreamRestorer):
// Result.Err is a *drill.Error for a finding about the backup, any other error proves nothing
// about it. It must not write outside dir.
type Restorer = drill.StreamRestorer

// childJob is what the parent hands the child on stdin.
type childJob struct {
	Dir    string           `json:"dir"`
	Etcd   string           `json:"etcd"`
	Full   drill.Snapshot   `json:"full"`
	Deltas []drill.Snapshot `json:"deltas,omitempty"`
}

// childResult is what the child reports on stdout, one JSON line.
type childResult struct {
	Revision int64         `json:"revision,omitempty"`
	Keys     int64         `json:"keys,omitempty"`
	Duration time.Duration `json:"duration"`
	// FullRestored and DeltaWait are drill.Result's.
	FullRestored time.Duration `json:"fullRestored,omitempty"`
	DeltaWait    time.Duration `json:"deltaWait,omitempty"`
	// Reason, Key and Detail are a finding (drill.Error); Error any other failure.
	Reason drill.Reason `json:"reason,omitempty"`
	Key    string       `json:"key,omitempty"`
	Detail string       `json:"detail,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// childDeltasFD is the child's file descriptor of the stream of deltas (ExtraFiles[0]).
const childDeltasFD = 3

// ChildCommand is the hidden command the parent runs (ChildRestorer): it reads a childJob on
// stdin and the verified deltas on file descriptor 3, restores them with drill.RestoreStream
// and writes a childResult on stdout. It reaches no store and is given no credentials: an empty
// environment and no file descriptor but those four (see ChildRestorer).
func ChildCommand() *cobra.Command {
	return &cobra.Command{
		Use:    ChildCommandName,
		Short:  "Restore one fetched snapshot chain for a restore drill (run by the extension itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return RunChildProcess(cmd.Context())
		},
	}
}

// RunChildProcess is RunChild on the process's stdin, file descriptor 3 and stdout, as
// ChildRestorer starts it.
func RunChildProcess(ctx context.Context) error {
	if err := confineChild(); err != nil {
		return err
	}
	deltas := os.NewFile(childDeltasFD, "deltas")
	if deltas == nil {
		return fmt.Errorf("no stream of deltas on file descriptor %d", childDeltasFD)
	}
	defer deltas.Close()
	return RunChild(ctx, os.Stdin, deltas, os.Stdout)
}

// RunChild is the child's work: one job from in, its deltas from deltas, one result to out. Its
// error is only about reading the job or writing the result; a failed restore is a result.
func RunChild(ctx context.Context, in, deltas io.Reader, out io.Writer) error {
	var job childJob
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		return fmt.Errorf("reading the restore job: %w", err)
	}
	full := job.Full
	ch := drill.Chain{Etcd: job.Etcd, Full: &full, Deltas: job.Deltas}
	r := drill.RestoreStream(ctx, ch, job.Dir, deltas, drill.Options{})
	res := childResult{Revision: r.Revision, Keys: r.Keys, Duration: r.Duration, FullRestored: r.FullRestored, DeltaWait: r.DeltaWait}
	var de *drill.Error
	switch {
	case errors.As(r.Err, &de):
		res.Reason, res.Key, res.Detail = de.Reason, de.Key, de.Detail
		if de.Err != nil {
			res.Detail += ": " + de.Err.Error()
		}
	case r.Err != nil:
		res.Error = r.Err.Error()
	}
	return json.NewEncoder(out).Encode(res)
}

// ChildRestorer runs each restore in a new process: Path with Args (the provider binary and
// ChildCommandName), so that a snapshot etcd cannot handle crashes that process, not the
// controller, and the restore's memory is returned when it exits.
//
// The child parses databases whose bytes a shoot controls, so it gets only what the restore
// needs: an empty environment (none of the controller's variables: no KUBECONFIG, no cloud
// credentials a deployment may set), the scratch directory as its working directory, and file
// descriptors 0 (the job), 1 and 2 (pipes the parent reads) and 3 (the deltas); every other
// descriptor of the controller is close-on-exec (closeInheritedOnExec). It sets no_new_privs before it reads anything (confineChild),
// so no set-user-ID program can raise its privileges. It keeps the controller's uid and
// filesystem view: the pod's mounted service-account token stays readable by path (a separate
// uid or mount namespace needs privileges a pod does not have; docs/restore-drills.md).
//
// A child that crashes (a panic, a fatal error: etcd failing on the verified data) is
// RestoreFailed. A child killed by a signal (SIGKILL: out of memory, most likely), one that
// cannot be started, or one cut off by ctx proves nothing about the backup: its error is no
// finding.
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

// maxChildOutput bounds what is kept of the child's stdout and stderr.
const maxChildOutput = 64 << 10

// Restore implements Restorer: the child gets the job on stdin and deltas as its file
// descriptor 3.
func (c ChildRestorer) Restore(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
	r := drill.Result{Etcd: ch.Etcd, Deltas: len(ch.Deltas), Size: ch.Size(), Started: time.Now()}
	defer func() { r.Duration = time.Since(r.Started) }()
	if ch.Full == nil {
		r.Err = drill.NewFinding(drill.ReasonNoFullSnapshot, "", "no full snapshot of "+ch.Etcd+" to restore")
		return r
	}
	r.Full = ch.Full.Key
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
		switch {
		case res.Reason != "":
			if r.Err = drill.NewFinding(res.Reason, res.Key, res.Detail); r.Err == nil {
				r.Err = fmt.Errorf("restore process reported an unknown reason %q: %s", res.Reason, res.Detail)
			}
		case res.Error != "":
			r.Err = fmt.Errorf("restore process: %s", res.Error)
		}
	case errors.As(runErr, &exit) && killed(exit):
		r.Err = fmt.Errorf("restore process killed by %s (out of memory?); nothing proven about the backup", exit.ProcessState.Sys().(syscall.WaitStatus).Signal())
	case errors.As(runErr, &exit):
		r.Err = drill.NewFinding(drill.ReasonRestoreFailed, ch.Full.Key,
			fmt.Sprintf("the restore process crashed on the verified snapshots (%s): %s", exit.ProcessState, crashLine(stderr.Bytes())))
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
