// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// The restore child's protocol, both ends in this package: ChildRestorer (the parent, in the
// controller's process) starts the provider binary's hidden command ChildCommandName with the
// chain's scratch directory as its working directory, writes one childJob as JSON on its stdin,
// and hands it the stream of verified deltas as file descriptor 3 (childDeltasFD), framed as
// FetchAndRestore sends them to any StreamRestorer (spill's writeFrame: each delta's JSON length,
// 8 bytes big-endian, then the JSON). The child (RunChildProcess) confines itself to that
// directory (confineChild), restores with RestoreStream and writes one childResult as a JSON line
// on stdout. Anything else it writes goes to stderr, of which the parent keeps the reason of a
// crash.

// ChildCommandName is the provider binary's hidden command that restores one fetched chain.
const ChildCommandName = "restore-drill"

// childJob is what the parent hands the child on stdin.
type childJob struct {
	// Dir is the chain's scratch directory: the child's working directory, the one directory it
	// may write; a job naming another is refused.
	Dir    string     `json:"dir"`
	Etcd   string     `json:"etcd"`
	Full   Snapshot   `json:"full"`
	Deltas []Snapshot `json:"deltas,omitempty"`
}

// childResult is what the child reports on stdout, one JSON line.
type childResult struct {
	Revision int64         `json:"revision,omitempty"`
	Keys     int64         `json:"keys,omitempty"`
	Duration time.Duration `json:"duration"`
	// FullRestored and DeltaWait are Result's.
	FullRestored time.Duration `json:"fullRestored,omitempty"`
	DeltaWait    time.Duration `json:"deltaWait,omitempty"`
	// Reason, Key and Detail are a finding (Error); Error any other failure.
	Reason Reason `json:"reason,omitempty"`
	Key    string `json:"key,omitempty"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
	// Unconfined is why the child ran without Landlock ("" : confined); Result.Unconfined.
	Unconfined string `json:"unconfined,omitempty"`
}

// childDeltasFD is the child's file descriptor of the stream of deltas (ExtraFiles[0]).
const childDeltasFD = 3

// ChildCommand is the hidden command the parent runs (ChildRestorer): RunChildProcess. It
// reaches no store and is given no credentials: an empty environment and no file descriptor but
// those four (see ChildRestorer).
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

// RunChildProcess is the restore child as ChildRestorer starts it: it confines itself to its
// working directory (confineChild: no_new_privs, and Landlock where the kernel offers it, which
// re-executes the binary once), then runs RunChild on its stdin, file descriptor 3 and stdout.
// Its error is only about its own plumbing; a failed restore, and a confinement that failed, are
// results on stdout (no finding about the backup).
func RunChildProcess(ctx context.Context) error {
	return runChildProcess(ctx, landlockABI)
}

// runChildProcess is RunChildProcess with the kernel's Landlock ABI asked of abi (a test's seam).
func runChildProcess(ctx context.Context, abi func() (int, error)) error {
	dir, err := os.Getwd()
	if err != nil {
		return json.NewEncoder(os.Stdout).Encode(childResult{Error: fmt.Sprintf("the restore process's working directory: %v", err)})
	}
	unconfined, err := confineChild(dir, abi)
	if err != nil {
		return json.NewEncoder(os.Stdout).Encode(childResult{Error: err.Error()})
	}
	deltas := os.NewFile(childDeltasFD, "deltas")
	if deltas == nil {
		return fmt.Errorf("no stream of deltas on file descriptor %d", childDeltasFD)
	}
	defer deltas.Close()
	return RunChild(ctx, dir, unconfined, os.Stdin, deltas, os.Stdout)
}

// RunChild is the child's work in dir: one job from in, its deltas from deltas, one result to
// out, which carries unconfined (why the child runs without Landlock, "" when it is confined).
// A job naming another directory than dir is refused (a result, no finding). Its error is only
// about reading the job or writing the result; a failed restore is a result.
func RunChild(ctx context.Context, dir, unconfined string, in, deltas io.Reader, out io.Writer) error {
	var job childJob
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		return fmt.Errorf("reading the restore job: %w", err)
	}
	res := childResult{Unconfined: unconfined}
	if !sameDir(job.Dir, dir) {
		res.Error = fmt.Sprintf("the job names the directory %q, the restore process is confined to %q", job.Dir, dir)
		return json.NewEncoder(out).Encode(res)
	}
	full := job.Full
	ch := Chain{Etcd: job.Etcd, Full: &full, Deltas: job.Deltas}
	r := RestoreStream(ctx, ch, job.Dir, deltas, Options{})
	res.Revision, res.Keys, res.Duration, res.FullRestored, res.DeltaWait = r.Revision, r.Keys, r.Duration, r.FullRestored, r.DeltaWait
	var de *Error
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

// sameDir reports whether a and b name the same existing directory.
func sameDir(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil || !ia.IsDir() {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}
