// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// ConditionBackupsCopied on a BackupEntry says whether its copy bucket holds its snapshots within
// the copy's RPO, as the last pass found them.
const ConditionBackupsCopied = connect.ConditionBackupsCopied

// Reasons of BackupsCopied.
const (
	// ReasonCopied (True): the copy lags by no more than the RPO.
	ReasonCopied = "Copied"
	// ReasonCopyLagging (False): the oldest snapshot the copy lacks is older than the RPO.
	ReasonCopyLagging = "CopyLagging"
	// ReasonCopyConflict (False): the copy holds a key differently and not older: never
	// overwritten; an operator must look.
	ReasonCopyConflict = "CopyConflict"
	// ReasonCopyUnavailable (Unknown): the copy store could not be read (credentials, bucket,
	// listing): the lag is not known and nothing is called caught up.
	ReasonCopyUnavailable = "CopyUnavailable"
	// ReasonCopyIsSource (False): the copy bucket is the entry's own bucket (copy.bucketName
	// names it): there is no second copy, and none is made.
	ReasonCopyIsSource = "CopyIsSource"
	// ReasonSourceUnavailable (Unknown): the entry's own bucket could not be read: what the copy
	// lacks is not known.
	ReasonSourceUnavailable = "SourceUnavailable"
	// ReasonServingFromCopy (Unknown): copy.serve is copy: the shoot writes the copy bucket
	// itself and nothing is copied into it (serving.go).
	ReasonServingFromCopy = "ServingFromCopy"
)

// outcome is what one pass found: whether each store could be listed, and the engine's result.
type outcome struct {
	// copyErr is set when the copy store could not be read (its credentials, its plane or its
	// listing); sourceErr when the entry's bucket could not be listed.
	copyErr, sourceErr error
	// result is the engine's, meaningful only when both stores were listed.
	result replication.Result
	// copyFailed is the pass's error when snapshots were not copied (result.Failed).
	copyFailed error
	// copyIsSource is set when the copy bucket is the entry's own: nothing was copied or listed.
	copyIsSource bool
}

// verdict is BackupsCopied's status, reason and message, and the lag when it is known.
type verdict struct {
	status  gardencorev1beta1.ConditionStatus
	reason  string
	message string
	// lag is known only where both stores were listed completely.
	lag      time.Duration
	lagKnown bool
}

// decide is the pure decision of BackupsCopied over a pass's outcome (table-tested): False
// CopyIsSource for a copy bucket that is the entry's own; Unknown while either store could not
// be listed completely (never "caught up" without both listings), False CopyConflict for a key the copy holds differently, False CopyLagging when the oldest
// missing snapshot is older than rpo, else True.
func decide(o outcome, rpo time.Duration, bucket, copyBucket string, now time.Time) verdict {
	switch {
	case o.copyIsSource:
		return verdict{status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyIsSource,
			message: fmt.Sprintf("The copy bucket %q is the entry's own bucket: there is no second copy, and none is made. Set copy.bucketName to another bucket.", copyBucket)}
	case o.copyErr != nil:
		return verdict{status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyUnavailable,
			message: fmt.Sprintf("The copy bucket %q cannot be read: %v. What it lacks is not known.", copyBucket, o.copyErr)}
	case o.sourceErr != nil:
		return verdict{status: gardencorev1beta1.ConditionUnknown, reason: ReasonSourceUnavailable,
			message: fmt.Sprintf("The entry's bucket %q cannot be read: %v. What the copy lacks is not known.", bucket, o.sourceErr)}
	}
	r := o.result
	v := verdict{lag: r.Lag, lagKnown: true}
	oldest, missing := oldestMissing(r)
	failed := ""
	if o.copyFailed != nil {
		failed = fmt.Sprintf(" %d snapshots were not copied in the last pass: %v.", len(r.Failed), o.copyFailed)
	}
	if n := len(r.WriteConflicts); n > 0 {
		failed += fmt.Sprintf(" %d snapshots were written to the copy by someone else during the last pass and were not overwritten; the next pass decides again.", n)
	}
	if r.Unguarded > 0 {
		failed += fmt.Sprintf(" %d writes were not guarded by the store: an object written to the copy meanwhile may have been replaced.", r.Unguarded)
	}
	failed += modeNote(r)
	switch {
	case len(r.Plan.Conflicts) > 0:
		c := r.Plan.Conflicts[0]
		v.status, v.reason = gardencorev1beta1.ConditionFalse, ReasonCopyConflict
		v.message = fmt.Sprintf("The copy bucket %q holds %d snapshots differently from the entry's bucket %q and not older, which are never overwritten; the first: %q (%d bytes, %s in the copy; %d bytes, %s in the entry's bucket). An operator must look.%s",
			copyBucket, len(r.Plan.Conflicts), bucket, c.Source.Key, c.Destination.Size, stamp(c.Destination.Modified), c.Source.Size, stamp(c.Source.Modified), failed)
	case r.Lag > rpo:
		v.status, v.reason = gardencorev1beta1.ConditionFalse, ReasonCopyLagging
		v.message = fmt.Sprintf("The copy bucket %q lags by %s, more than the RPO of %s: %d snapshots are missing; the oldest, %q, is %s old.%s",
			copyBucket, r.Lag.Round(time.Second), rpo, missing, oldest.Key, now.Sub(oldest.Modified).Round(time.Second), failed)
	default:
		v.status, v.reason = gardencorev1beta1.ConditionTrue, ReasonCopied
		v.message = fmt.Sprintf("The copy bucket %q holds the entry's snapshots (%d in sync); it lags by %s, within the RPO of %s.%s",
			copyBucket, r.Plan.InSync+r.Copied, r.Lag.Round(time.Second), rpo, failed)
	}
	return v
}

// oldestMissing is the oldest snapshot the copy still lacks after the pass (failed, in conflict,
// or written there by someone else during the pass), and how many there are.
func oldestMissing(r replication.Result) (objectstore.ObjectVersion, int) {
	var oldest objectstore.ObjectVersion
	n := 0
	consider := func(o objectstore.ObjectVersion) {
		n++
		if n == 1 || o.Modified.Before(oldest.Modified) {
			oldest = o
		}
	}
	for _, f := range r.Failed {
		consider(f.Object)
	}
	for _, c := range r.Plan.Conflicts {
		consider(c.Source)
	}
	for _, o := range r.WriteConflicts {
		consider(o)
	}
	return oldest, n
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// copyMode is how a pass copied, as the log's mode says: server (inside the store), stream
// (through the extension), mixed, or none.
func copyMode(r replication.Result) string {
	switch {
	case r.ServerSide > 0 && r.Streamed > 0:
		return "mixed"
	case r.ServerSide > 0:
		return "server"
	case r.Streamed > 0:
		return "stream"
	}
	return "none"
}

// modeNote says in BackupsCopied's message how the last pass copied, and why it streamed where
// the store refused the server-side copy (the operator's grant is missing, or the stores differ).
func modeNote(r replication.Result) string {
	note := ""
	if r.ServerSide > 0 {
		note += fmt.Sprintf(" The last pass copied %d snapshots inside the store (server-side).", r.ServerSide)
	}
	if r.Streamed > 0 {
		note += fmt.Sprintf(" The last pass streamed %d snapshots through the extension.", r.Streamed)
	}
	if r.ServerSideRefused != nil {
		note += fmt.Sprintf(" The store refused a server-side copy with the copy's credentials (%v): another store, or no read grant on the entry's bucket.", r.ServerSideRefused)
	}
	return note
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
