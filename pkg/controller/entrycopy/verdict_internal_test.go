// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"errors"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// TestDecide: BackupsCopied over a pass's outcome: never True without both listings, a
// conflict before a lag, the lag against the RPO, the oldest missing snapshot named with its age.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const rpo = 15 * time.Minute
	snap := func(key string, age time.Duration) objectstore.ObjectVersion {
		return objectstore.ObjectVersion{Key: key, Size: 10, Modified: now.Add(-age)}
	}
	failed := func(objs ...objectstore.ObjectVersion) []objectstore.ObjectError {
		var f []objectstore.ObjectError
		for _, o := range objs {
			f = append(f, objectstore.ObjectError{Object: o, Err: objectstore.ErrUnreachable})
		}
		return f
	}
	cases := []struct {
		name       string
		o          outcome
		want       gardencorev1beta1.ConditionStatus
		reason     string
		lagKnown   bool
		mentioning []string
	}{
		{"copy store unreadable", outcome{copyErr: objectstore.ErrUnreachable}, gardencorev1beta1.ConditionUnknown, ReasonCopyUnavailable, false, []string{`"b-copy" cannot be read`}},
		{"copy store unreadable though the source failed too", outcome{copyErr: objectstore.ErrForbidden, sourceErr: objectstore.ErrUnreachable}, gardencorev1beta1.ConditionUnknown, ReasonCopyUnavailable, false, nil},
		{"copy bucket is the entry's own", outcome{copyIsSource: true}, gardencorev1beta1.ConditionFalse, ReasonCopyIsSource, false, []string{`"b-copy" is the entry's own bucket`, "copy.bucketName"}},
		{"copy bucket is the entry's own though a listing failed", outcome{copyIsSource: true, copyErr: objectstore.ErrForbidden}, gardencorev1beta1.ConditionFalse, ReasonCopyIsSource, false, nil},
		{"source unreadable", outcome{sourceErr: objectstore.ErrUnreachable}, gardencorev1beta1.ConditionUnknown, ReasonSourceUnavailable, false, []string{`"b" cannot be read`}},
		{"caught up", outcome{result: replication.Result{Plan: replication.Plan{InSync: 3}, Copied: 2}}, gardencorev1beta1.ConditionTrue, ReasonCopied, true, []string{"5 in sync", "lags by 0s"}},
		{"lag within the RPO, a snapshot not copied", outcome{result: replication.Result{Failed: failed(snap("e/Incr-1-2-3", 5*time.Minute)), Lag: 5 * time.Minute}, copyFailed: errors.New("boom")},
			gardencorev1beta1.ConditionTrue, ReasonCopied, true, []string{"1 snapshots were not copied in the last pass: boom"}},
		{"lag over the RPO names the oldest missing", outcome{result: replication.Result{Failed: failed(snap("e/Incr-5-6-7", 20*time.Minute), snap("e/Full-0-4-1", time.Hour)), Lag: time.Hour}, copyFailed: errors.New("boom")},
			gardencorev1beta1.ConditionFalse, ReasonCopyLagging, true, []string{"lags by 1h0m0s, more than the RPO of 15m0s", "2 snapshots are missing", `the oldest, "e/Full-0-4-1", is 1h0m0s old`}},
		{"unguarded writes are said", outcome{result: replication.Result{Plan: replication.Plan{InSync: 1}, Copied: 2, Unguarded: 2}}, gardencorev1beta1.ConditionTrue, ReasonCopied, true,
			[]string{"3 in sync", "2 writes were not guarded by the store"}},
		{"a write conflict over the RPO is a missing snapshot", outcome{result: replication.Result{WriteConflicts: []objectstore.ObjectVersion{snap("e/Incr-5-6-7", 20*time.Minute)}, Lag: 20 * time.Minute}},
			gardencorev1beta1.ConditionFalse, ReasonCopyLagging, true, []string{"1 snapshots are missing", `the oldest, "e/Incr-5-6-7", is 20m0s old`, "1 snapshots were written to the copy by someone else"}},
		{"a conflict comes first", outcome{result: replication.Result{Plan: replication.Plan{Conflicts: []replication.Conflict{{Source: snap("e/Full-0-4-1", time.Minute), Destination: snap("e/Full-0-4-1", 0)}}}, Lag: time.Minute}},
			gardencorev1beta1.ConditionFalse, ReasonCopyConflict, true, []string{`"e/Full-0-4-1"`, "never overwritten"}},
		// How the pass copied (server-side or streamed, and why it streamed) is said.
		{"copied inside the store", outcome{result: replication.Result{Copied: 2, ServerSide: 2}}, gardencorev1beta1.ConditionTrue, ReasonCopied, true,
			[]string{"copied 2 snapshots inside the store (server-side)"}},
		{"streamed where the store refused", outcome{result: replication.Result{Copied: 3, Streamed: 3, ServerSideRefused: objectstore.ErrForbidden}}, gardencorev1beta1.ConditionTrue, ReasonCopied, true,
			[]string{"streamed 3 snapshots through the extension", "refused a server-side copy with the copy's credentials (forbidden)", "no read grant on the entry's bucket"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := decide(c.o, rpo, "b", "b-copy", now)
			if v.status != c.want || v.reason != c.reason || v.lagKnown != c.lagKnown {
				t.Fatalf("got %s %s (lag known %t): %s; want %s %s (%t)", v.status, v.reason, v.lagKnown, v.message, c.want, c.reason, c.lagKnown)
			}
			for _, m := range c.mentioning {
				if !strings.Contains(v.message, m) {
					t.Errorf("message %q does not say %q", v.message, m)
				}
			}
		})
	}
}

// TestCopyMode: the log's mode of a pass by what it copied inside the store and streamed.
func TestCopyMode(t *testing.T) {
	for _, c := range []struct {
		server, streamed int
		want             string
	}{{0, 0, "none"}, {3, 0, "server"}, {0, 3, "stream"}, {1, 2, "mixed"}} {
		if got := copyMode(replication.Result{ServerSide: c.server, Streamed: c.streamed}); got != c.want {
			t.Errorf("copyMode(%d inside, %d streamed) = %q; want %q", c.server, c.streamed, got, c.want)
		}
	}
}
