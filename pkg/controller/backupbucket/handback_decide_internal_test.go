// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Every state of the hand-back as a row of the pure decision: what one pass observes, and the
// plan it carries out. Issue 43 (a refused hand-back failed the bucket with
// ERR_CONFIGURATION_PROBLEM, which stops gardenlet syncing the very secrets it waits for) and
// issue 44 (a hand-back left every entry's own principal valid for good, also with a switch-off
// in the same change) are rows here; on the actuator they are
// TestHandBackWaitsAndFinishesByItself and TestHandBackRevokesEveryEntryPrincipal.
func TestDecideHandBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	moved := holders{}
	held := holders{count: 7, first: []string{"garden/entry-a", "shoot--p--a/etcd-backup", "x/1", "x/2", "x/3"}, stale: []string{"shoot--p--a"}}
	minio := entryIssuers{"MinIO": {"http://minio"}}
	two := entryIssuers{"MinIO": {"http://minio"}, "IAM": {"arn:aws:iam::1:root"}}
	moves := entryIssuers{"MinIO": {"http://minio", "http://minio-new"}}
	cases := []struct {
		name string
		o    handBackObserved
		want []string
		// say are parts of the message of the plan's first wait step.
		say []string
	}{
		{name: "nothing generated, no entry credentials: handed back at once",
			o: handBackObserved{}, want: []string{"status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "issue 43: generation still on: waits (False), the pass succeeds",
			o:    handBackObserved{generated: "cred-1", generating: true},
			want: []string{"wait False/WaitingForSettings"}, say: []string{"remove generatedCredentials", `"cred-1"`}},
		{name: "generation still on with the store's own keys (azure): kept, handed back",
			o:    handBackObserved{generated: "key1", generating: true, storeKeys: true},
			want: []string{"status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "issue 44 finding 1: entry credentials still on (a hand-back alone): waits, naming them",
			o:    handBackObserved{entryCredentials: "MinIO", entryIssuers: minio, holders: held},
			want: []string{"wait False/WaitingForSettings"}, say: []string{"remove entryCredentials", "issuer MinIO"}},
		{name: "both still on: one wait naming both",
			o:    handBackObserved{generated: "cred-1", generating: true, entryCredentials: "IAM"},
			want: []string{"wait False/WaitingForSettings"}, say: []string{"generatedCredentials", "entryCredentials (issuer IAM"}},
		{name: "issue 43: the store cannot be handed back yet, by itself: waits (Progressing), nothing revoked, the pass succeeds",
			o:    handBackObserved{generated: "cred-1", entryIssuers: minio, holders: moved, settlingSince: now.Add(-time.Hour), now: now, store: &objectstore.HandBackWaitError{Why: "3 noncurrent generations are deleted only by rule R"}},
			want: []string{"wait Progressing/WaitingForStore"}, say: []string{"waits for the store", "3 noncurrent generations", "Nothing is revoked"}},
		{name: "issue 43: the store cannot be handed back yet, by the operator: waits (False)",
			o:    handBackObserved{store: &objectstore.HandBackWaitError{Why: "delete the noncurrent versions", ByOperator: true}},
			want: []string{"wait False/WaitingForStore"}, say: []string{"delete the noncurrent versions"}},
		{name: "settings still asked for and the store waits: the settings first",
			o:    handBackObserved{generated: "cred-1", generating: true, store: &objectstore.HandBackWaitError{Why: "x"}},
			want: []string{"wait False/WaitingForSettings"}},
		{name: "issue 43: generation off, secrets still hold the generated credential: waits (Progressing), naming them",
			o:    handBackObserved{generated: "cred-1", holders: held, now: now},
			want: []string{"wait Progressing/WaitingForSecrets nudge shoot--p--a"}, say: []string{"7 secrets", "garden/entry-a", "and 2 more", `generated credential "cred-1" is revoked`}},
		{name: "issue 44 finding 1: switched off in the same change, etcd-backup secrets still hold entry principals: waits, naming them",
			o:    handBackObserved{entryIssuers: minio, holders: held},
			want: []string{"wait Progressing/WaitingForSecrets nudge shoot--p--a"}, say: []string{"shoot--p--a/etcd-backup", "issuer MinIO", "http://minio"}},
		{name: "secrets moved, generated credential: settles first",
			o:    handBackObserved{generated: "cred-1", holders: moved, now: now},
			want: []string{"wait Progressing/Settling"}, say: []string{`"cred-1"`, "2m0s"}},
		{name: "settling, not long enough",
			o:    handBackObserved{generated: "cred-1", holders: moved, settlingSince: now.Add(-time.Minute), now: now},
			want: []string{"wait Progressing/Settling"}},
		{name: "settled: revoked, then handed back",
			o:    handBackObserved{generated: "cred-1", holders: moved, settlingSince: now.Add(-HandBackSettle), now: now},
			want: []string{"revoke generated", "status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "a secret moved back while settling: waits for it again",
			o:    handBackObserved{generated: "cred-1", holders: held, settlingSince: now.Add(-time.Hour), now: now},
			want: []string{"wait Progressing/WaitingForSecrets nudge shoot--p--a"}},
		{name: "issue 44 finding 1: secrets moved, entry principals recorded: every issuer swept (no settling: no shoot holds them), then handed back",
			o:    handBackObserved{entryIssuers: two, holders: moved, now: now},
			want: []string{"sweep IAM@arn:aws:iam::1:root", "sweep MinIO@http://minio", "wait if principals left", "status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "issue 44 finding 8: an issuer that issued in two places (the operator's credentials moved): both swept, each one's leftovers waited for",
			o:    handBackObserved{entryIssuers: moves, holders: moved, now: now},
			want: []string{"sweep MinIO@http://minio", "sweep MinIO@http://minio-new", "wait if principals left", "status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "generated and entry principals: settle, revoke, sweep",
			o:    handBackObserved{generated: "cred-1", entryIssuers: minio, holders: moved, settlingSince: now.Add(-time.Hour), now: now},
			want: []string{"revoke generated", "sweep MinIO@http://minio", "wait if principals left", "status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
		{name: "the store's keys and a recorded entry issuer: the keys kept, the principals swept",
			o:    handBackObserved{generated: "key1", storeKeys: true, entryIssuers: minio, holders: moved, now: now},
			want: []string{"sweep MinIO@http://minio", "wait if principals left", "status Progressing/ReleasingEntries", "release entries", "release marks", "status True/HandedBack"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := decideHandBack(c.o)
			var got []string
			for _, s := range plan {
				got = append(got, s.String())
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("plan %q; want %q", got, c.want)
			}
			if len(c.say) == 0 {
				return
			}
			w, ok := plan[0].(handBackWaitStep)
			if !ok {
				t.Fatalf("the plan does not start with a wait: %q", got)
			}
			for _, s := range c.say {
				if !strings.Contains(w.message, s) {
					t.Errorf("message %q does not say %q", w.message, s)
				}
			}
		})
	}
}
