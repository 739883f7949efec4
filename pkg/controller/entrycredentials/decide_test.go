// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	. "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var (
	now    = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rw     = objectstore.EntryReadWrite
	on     = &credentials.EntrySettings{Issuer: "X"}
	period = &credentials.EntrySettings{Issuer: "X", EntryGeneration: credentials.EntryGeneration{Rotation: &credentials.Rotation{
		Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}}}}
	yes, no = true, false
)

// cred is credential id of issuer X in place p, read-write, issued at the given age (0: unknown).
func cred(id, p string, age time.Duration) *entryrecord.Credential {
	c := &entryrecord.Credential{ID: id, Issuer: "X", IssuedIn: p, Access: rw}
	if age > 0 {
		c.IssuedAt = now.Add(-age)
	}
	return c
}

func all(c *entryrecord.Credential) entryrecord.Credential { r := *c; r.ID = ""; return r }

func keptAt(c *entryrecord.Credential) *entryrecord.Credential {
	k := *c
	if k.IssuedAt.IsZero() {
		k.IssuedAt = now
	}
	return &k
}

// holding is the observation of a secret that holds id, with record r of the entry (nil: none).
func holding(settings *credentials.EntrySettings, id string, r *entryrecord.Record) Observed {
	o := Observed{Access: rw, Settings: settings, SecretExists: true, Ours: true, HeldID: id, BucketID: "bucket-1", Location: "p1", Now: now}
	if r != nil {
		o.Record = *r
	}
	return o
}

func with(o Observed, change func(*Observed)) Observed { change(&o); return o }

// row is one state or transition of the entry credential's decisions: got is what a decision
// (Decide, DecideRefusal, DecideSettle, MigrationRetiree, DecideDeletion, DeletionRevocations, Due) returned.
type row struct {
	name      string
	got, want any
}

func refuse(o Observed, r Refusal, bucketOnSeed *bool) Fallback {
	return DecideRefusal(o, Decide(o), r, bucketOnSeed)
}

// retiree is MigrationRetiree's answer.
type retiree struct {
	ID   string
	ByID bool
}

func retireeOf(c *entryrecord.Credential, byID bool) retiree {
	if c == nil {
		return retiree{}
	}
	return retiree{c.ID, byID}
}

// due is Due's answer.
type due struct {
	At time.Time
	OK bool
}

func dueOf(at time.Time, ok bool) due { return due{at, ok} }

// written is the settle of a pass whose secret was written, holding published (nil: the bucket's).
func written(published *entryrecord.Credential, change func(*SettleObserved)) SettleObserved {
	o := SettleObserved{Entry: "e", Decided: true, Written: true, Published: published, Reach: "reach", Now: now}
	if change != nil {
		change(&o)
	}
	return o
}

func recordStep(published *entryrecord.Credential, unrevoked []entryrecord.Credential, retiring *entryrecord.Retiring) SettleStep {
	return SettleStep{Kind: SettleRecord, Record: entryrecord.Record{Entry: "e", Published: published, Unrevoked: unrevoked, Retiring: retiring}}
}

// honoured is step (a SettleRecord) recording request as honoured.
func honoured(step SettleStep, request string) SettleStep {
	step.Record.Honoured = request
	return step
}

func revokeStep(c entryrecord.Credential, keep ...string) SettleStep {
	what := c.ID
	if what == "" {
		what = "all of them"
	}
	return SettleStep{Kind: SettleRevoke, Credential: c, Keep: keep, Continue: true, Event: &Event{Type: "Normal", Reason: ReasonEntryCredentialRevoked,
		Message: "Revoked the entry's credentials of issuer " + c.Issuer + " (" + what + ") that its etcd-backup secret no longer holds"}}
}

func endStep(until time.Time) SettleStep {
	return SettleStep{Kind: SettleEndRetired, Until: until, Continue: true}
}

func issuedStep(c *entryrecord.Credential) SettleStep {
	return SettleStep{Kind: SettleEvent, Event: &Event{Type: "Normal", Reason: ReasonEntryCredentialIssued,
		Message: "The etcd-backup secret holds the entry's own credential " + c.ID + " of issuer " + c.Issuer}}
}

func ownCondition(c *entryrecord.Credential) *SettleCondition {
	return &SettleCondition{Status: "True", Reason: ReasonOwnPrefix, Isolation: "own_prefix",
		Message: "the etcd-backup secret holds credential " + c.ID + " of issuer " + c.Issuer + " (in " + c.IssuedIn + "): reach"}
}

var bucketWideCondition = &SettleCondition{Status: "False", Reason: ReasonBucketWide, Message: "reach", Isolation: "bucket_wide"}

// TestDecide is the entry credential's decisions in one table, one row a state or transition of
// issue 44's list; a row of a finding of issue 44 is named for it and failed before its fix.
// Findings decided outside this package are rows of their owners' tables: the hand-back's
// (finding 1: revoke every entry principal or wait naming it) and the sweep's places (finding 8)
// in backupbucket's TestDecideHandBack, the aws entry policy (finding 3) in aws's
// TestEntryPolicyAllowsExactlyWhatEtcdBackupRestoreCalls.
func TestDecide(t *testing.T) {
	k1 := cred("k1", "p1", time.Hour)
	k1old := cred("k1", "p1", 25*time.Hour)
	k0 := cred("k0", "p1", 2*time.Hour)
	k2 := cred("k2", "p1", time.Minute)
	retiring := &entryrecord.Retiring{Credential: *k0, Until: now.Add(time.Minute)}
	steady := &entryrecord.Record{Entry: "e", Published: k1}
	ro := objectstore.EntryReadOnly
	atQuota := &credentials.EntrySettings{Issuer: "X", EntryGeneration: credentials.EntryGeneration{AllowBucketCredentialAtQuota: true}}
	source := Observed{Access: ro, Settings: on, SecretExists: true, Ours: true, HeldID: "bucket-1", BucketID: "bucket-1", Location: "p1", Now: now}
	gone1, gone2 := *cred("a", "gone", 0), *cred("b", "gone", 0)
	errPending, errBuild, errInvalid := errors.New("the seed's configuration is awaited"), errors.New("the store did not answer"), errors.New("invalid configuration")
	rows := []row{
		// The pass before gardener's write (Decide).
		{name: "issue: no secret yet",
			got:  Decide(Observed{Access: rw, Settings: on, BucketID: "bucket-1", Location: "p1", Now: now}),
			want: Plan{Publish: PublishIssued}},
		{name: "issue: the secret holds the bucket's credential (a switch-on)",
			got:  Decide(holding(on, "bucket-1", nil)),
			want: Plan{Publish: PublishIssued}},
		{name: "publish: the recorded credential is kept, its issue time recorded",
			got:  Decide(holding(on, "k1", steady)),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1}},
		{name: "publish: a record without issue time counts from now (no burst of rotations)",
			got:  Decide(holding(period, "k1", &entryrecord.Record{Entry: "e", Published: cred("k1", "p1", 0)})),
			want: Plan{Publish: PublishRecorded, Published: keptAt(cred("k1", "p1", 0)), Recorded: cred("k1", "p1", 0)}},
		{name: "rotate by period: revoke all but the published first, issue keeping it, retire it for the grace",
			got: Decide(holding(period, "k1", &entryrecord.Record{Entry: "e", Published: k1old})),
			want: Plan{Publish: PublishIssued, Recorded: k1old, RevokeFirst: true, InUse: []string{"k1"}, Rotation: &Rotation{Reason: RotationByPeriod},
				AfterIssue: Retirement{Retire: &entryrecord.Retiring{Credential: *k1old, Until: now.Add(time.Hour)}},
				Instead:    Retirement{Revoke: []entryrecord.Credential{all(k1old)}}}},
		{name: "rotate on request; a previous rotation's credential still retiring is revoked first, not retired",
			got: Decide(with(holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring}), func(o *Observed) { o.RotationRequest = "r1" })),
			want: Plan{Publish: PublishIssued, Recorded: k1, RevokeFirst: true, InUse: []string{"k1"}, Rotation: &Rotation{Reason: RotationRequested, Request: "r1"},
				AfterIssue: Retirement{Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(credentials.DefaultGracePeriod)}},
				Instead:    Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "retire: a rotated-out credential whose retirement is not confirmed is retired again on a steady pass",
			got:  Decide(holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring})),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1, Retire: retiring}},
		{name: "finding 7: every unrevoked credential stays to revoke, not the first alone",
			got:  Decide(holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Unrevoked: []entryrecord.Credential{*cred("a", "gone", 0), *cred("b", "gone", 0)}})),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1, Revoke: []entryrecord.Credential{*cred("a", "gone", 0), *cred("b", "gone", 0)}}},
		{name: "switch-off: the bucket's credential, every credential of the recorded issuer's place revoked after the write",
			got:  Decide(with(holding(nil, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring}), func(o *Observed) { o.BucketWide = "off" })),
			want: Plan{Publish: PublishBucket, BucketWide: "off", Revoke: []entryrecord.Credential{all(k1)}, Retire: retiring}},
		{name: "place change: issue where the issuer reaches now, revoke the old one where it was issued",
			got: Decide(with(holding(on, "k1", steady), func(o *Observed) { o.Location = "p2" })),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "issuer change: issue with the configured issuer, revoke the old one with its own",
			got: Decide(holding(&credentials.EntrySettings{Issuer: "Y"}, "k1", steady)),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "source- entry: read-only access; a read-write record is replaced",
			got: Decide(with(holding(on, "k1", steady), func(o *Observed) { o.Access = objectstore.EntryReadOnly })),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "finding 9: another entry's record on a shared secret is neither reused nor revoked; the held ID is asked of the issuer",
			got:  Decide(with(holding(on, "k1", nil), func(o *Observed) { o.Ours = false })),
			want: Plan{AskOwns: "k1"}},
		{name: "finding 9: the issuer does not own the held ID for this entry: issue, nothing of the other's revoked",
			got:  Decide(with(holding(on, "k1", nil), func(o *Observed) { o.Ours = false; o.Owned = &no })),
			want: Plan{Publish: PublishIssued}},
		{name: "restart after the write, no intent (an earlier build's): an owned held ID is taken back",
			got:  Decide(with(holding(on, "k1", nil), func(o *Observed) { o.Owned = &yes })),
			want: Plan{Publish: PublishRecorded, Published: keptAt(cred("k1", "p1", 0)), Recorded: cred("k1", "p1", 0)}},
		{name: "restart after the write of an issuance: the intent is taken up, its retirement and revocations kept",
			got: Decide(with(holding(on, "k2", nil), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p1", time.Minute), Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
					Revoke: []entryrecord.Credential{*k0}, Rotation: RotationRequested, Request: "r1"}
			})),
			want: Plan{Publish: PublishRecorded, Published: cred("k2", "p1", time.Minute), Recorded: cred("k2", "p1", time.Minute), TakenUp: true,
				Revoke: []entryrecord.Credential{*k0}, Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
				Rotation: &Rotation{Reason: RotationRequested, Request: "r1"}}},
		{name: "restart: an intent whose write did not happen is not taken up (the record is still there)",
			got: Decide(with(holding(on, "k1", steady), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Published: cred("orphan", "p1", 0)}
			})),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1}},
		{name: "restart after a switch-off's write: the intent's revocations are taken up",
			got: Decide(with(holding(nil, "bucket-1", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			})),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true, Revoke: []entryrecord.Credential{all(k1)}}},
		{name: "restart after a switch-off's write, the bucket's credential rotated meanwhile: the intent is still taken up",
			got: Decide(with(holding(nil, "bucket-1", nil), func(o *Observed) {
				o.BucketWide, o.BucketID = "off", "bucket-2"
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			})),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true, Revoke: []entryrecord.Credential{all(k1)}}},
		{name: "restart after a rotation's write, then a switch-off: the intent's published credential is revoked with its issuer's place, its retirement and revocations kept",
			got: Decide(with(holding(nil, "k2", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p1", time.Minute), Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
					Revoke: []entryrecord.Credential{*k0}, Rotation: RotationRequested, Request: "r1"}
			})),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true,
				Revoke: []entryrecord.Credential{all(cred("k2", "p1", time.Minute)), *k0}, Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)}}},
		{name: "restart after an issuance's write, then a switch-off: the intent's published credential is revoked with its issuer's place",
			got: Decide(with(holding(nil, "k2", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p2", time.Minute), Revoke: []entryrecord.Credential{*k1}}
			})),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true,
				Revoke: []entryrecord.Credential{all(cred("k2", "p2", time.Minute)), *k1}}},
		{name: "quota: a switch-off's intent left untaken is revoked by the bucket-wide fallback",
			got: Decide(with(holding(on, "bucket-1", nil), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			})),
			want: Plan{Publish: PublishIssued, Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "finding 9 (a refused record): another entry wrote the secret after this entry's write; the entry's intent, the only list of what it still revokes and retires, is taken up",
			got: Decide(with(holding(on, "kB", nil), func(o *Observed) {
				o.Ours, o.Owned = false, &no
				o.Intent = &entryrecord.Intent{Published: k2, Retire: retiring, Revoke: []entryrecord.Credential{*k0}}
			})),
			want: Plan{Publish: PublishIssued, Revoke: []entryrecord.Credential{*k2, *k0}, Retire: retiring,
				Instead: Retirement{Revoke: []entryrecord.Credential{*k2, *k0}, Retire: retiring}}},
		{name: "finding 9 (a refused record): the issuer owns the held ID for this entry: the intent's published credential is that one, kept; the rest revoked",
			got: Decide(with(holding(on, "k2", nil), func(o *Observed) {
				o.Ours, o.Owned = false, &yes
				o.Intent = &entryrecord.Intent{Published: k2, Revoke: []entryrecord.Credential{*k0}}
			})),
			want: Plan{Publish: PublishRecorded, Published: keptAt(cred("k2", "p1", 0)), Recorded: cred("k2", "p1", 0), Revoke: []entryrecord.Credential{*k0}}},
		{name: "migrate there: the destination has no etcd-backup secret and no record: it issues, nothing in use",
			got:  Decide(Observed{Access: rw, Settings: on, BucketID: "bucket-1", Location: "p1", Now: now}),
			want: Plan{Publish: PublishIssued}},
		{name: "source- entry with operator credentials: a read-only credential issued",
			got:  Decide(Observed{Access: ro, Settings: on, BucketID: "bucket-1", Location: "p1", Now: now}),
			want: Plan{Publish: PublishIssued}},
		{name: "hand-back (the entry's side): entryCredentials switched off for it: the bucket's credential, every credential of the entry revoked after the write",
			got:  Decide(with(holding(nil, "k1", steady), func(o *Observed) { o.BucketWide = "entryCredentials is not set in the seed configuration" })),
			want: Plan{Publish: PublishBucket, BucketWide: "entryCredentials is not set in the seed configuration", Revoke: []entryrecord.Credential{all(k1)}}},

		// A refused issuance (DecideRefusal).
		{name: "finding 5: a source- entry refused: ask whether its bucket is on this seed", got: refuse(source, RefusedForbidden, nil), want: FallbackAskBucket},
		{name: "finding 5: a source- entry whose bucket lives on the source seed (generated credentials): the bucket's credential", got: refuse(source, RefusedForbidden, &no), want: FallbackSourceOfAnotherSeed},
		{name: "a source- entry whose bucket is on this seed (operator's credentials refused): fails", got: refuse(source, RefusedForbidden, &yes), want: FallbackFail},
		{name: "a read-write entry refused: fails", got: refuse(with(source, func(o *Observed) { o.Access = rw }), RefusedForbidden, nil), want: FallbackFail},
		{name: "a source- entry with a credential of its own on record refused: fails (keeps it)", got: refuse(with(source, func(o *Observed) {
			o.Record, o.HeldID = entryrecord.Record{Entry: "e", Published: &entryrecord.Credential{ID: "k1", Issuer: "X", IssuedIn: "p0", Access: ro}}, "k1"
		}), RefusedForbidden, nil), want: FallbackFail},
		{name: "quota: fails, the secret unchanged", got: refuse(holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1}), RefusedQuota, nil), want: FallbackFail},
		{name: "quota with allowBucketCredentialAtQuota: the bucket's credential", got: refuse(holding(atQuota, "bucket-1", nil), RefusedQuota, nil), want: FallbackAtQuota},
		{name: "another error with allowBucketCredentialAtQuota: fails", got: refuse(holding(atQuota, "bucket-1", nil), RefusedOther, nil), want: FallbackFail},

		// After gardener's write (DecideSettle).
		{name: "settle: the generic actuator returned before it asked for the data: nothing",
			got: DecideSettle(SettleObserved{Entry: "e", Now: now}), want: SettlePlan{}},
		{name: "settle: gardener's write failed: nothing changes hands, the condition is left",
			got: DecideSettle(withSettle(written(k1, nil), func(o *SettleObserved) { o.Written = false })), want: SettlePlan{}},
		{name: "settle: the entry's own credential could not be issued: the condition says NotIssued, nothing else",
			got:  DecideSettle(SettleObserved{Entry: "e", Decided: true, NotIssued: "quota", Now: now}),
			want: SettlePlan{Condition: &SettleCondition{Status: "False", Reason: ReasonNotIssued, Message: "quota", Isolation: "bucket_wide"}}},
		{name: "publish (steady): the record, the end of retired credentials whose time came, True/OwnPrefix",
			got:  DecideSettle(written(k1, nil)),
			want: SettlePlan{Steps: []SettleStep{recordStep(k1, nil, nil), endStep(time.Time{})}, Condition: ownCondition(k1)}},
		{name: "issue: the record, the end of retired credentials, the issued event",
			got:  DecideSettle(written(k2, func(o *SettleObserved) { o.Issued = true })),
			want: SettlePlan{Steps: []SettleStep{recordStep(k2, nil, nil), endStep(time.Time{}), issuedStep(k2)}, Condition: ownCondition(k2)}},
		{name: "finding 7: one failed revocation does not drop the others: the record names each before any is tried, each revocation a step that does not stop the next",
			got: DecideSettle(written(k2, func(o *SettleObserved) { o.Issued, o.Revoke = true, []entryrecord.Credential{gone1, gone2} })),
			want: SettlePlan{Steps: []SettleStep{recordStep(k2, []entryrecord.Credential{gone1, gone2}, nil), revokeStep(gone1), revokeStep(gone2), endStep(time.Time{}), issuedStep(k2)},
				Condition: ownCondition(k2)}},
		{name: "finding 9 (a refused record): the record naming every credential still to revoke comes first; a revocation of the published one's place keeps it",
			got:  DecideSettle(written(k2, func(o *SettleObserved) { o.Revoke = []entryrecord.Credential{all(k1)} })),
			want: SettlePlan{Steps: []SettleStep{recordStep(k2, []entryrecord.Credential{all(k1)}, nil), revokeStep(all(k1), "k2"), endStep(time.Time{})}, Condition: ownCondition(k2)}},
		{name: "rotate on request: the record with the retiring one, the end step, the issued event, the request removed, the retirement with the rotation event",
			got: DecideSettle(written(k2, func(o *SettleObserved) {
				o.Issued, o.Rotation = true, &Rotation{Reason: RotationRequested, Request: "r1"}
				o.Retire = &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)}
			})),
			want: SettlePlan{Steps: []SettleStep{honoured(recordStep(k2, nil, &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)}), "r1"), endStep(now.Add(time.Hour)), issuedStep(k2),
				{Kind: SettleRemoveRequest, Request: "r1"},
				{Kind: SettleRetire, Credential: *k1, Until: now.Add(time.Hour), Event: &Event{Type: "Normal", Reason: ReasonEntryCredentialRotated,
					Message: "Rotated the entry's credential (requested): etcd-backup holds k2 of issuer X; the previous one k1 stays valid until 2026-06-01T13:00:00Z (rotation.gracePeriod), then it ends"}}},
				Condition: ownCondition(k2)}},

		// A rotation request honoured once (Record.Honoured): its pass cut short or failing before the request's removal rotates nothing again.
		{name: "request honoured, its removal cut short (a restart, a failed write): the published one kept, the retirement on record finished, the request removed; no second rotation",
			got: Decide(with(holding(on, "k2", &entryrecord.Record{Entry: "e", Published: k2, Retiring: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)}, Honoured: "r1"}),
				func(o *Observed) { o.RotationRequest = "r1" })),
			want: Plan{Publish: PublishRecorded, Published: k2, Recorded: k2, Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
				Rotation: &Rotation{Reason: RotationRequested, Request: "r1"}}},
		{name: "request honoured before, a new request set since: rotated",
			got: Decide(with(holding(on, "k2", &entryrecord.Record{Entry: "e", Published: k2, Honoured: "r1"}), func(o *Observed) { o.RotationRequest = "r2" })),
			want: Plan{Publish: PublishIssued, Recorded: k2, RevokeFirst: true, InUse: []string{"k2"}, Rotation: &Rotation{Reason: RotationRequested, Request: "r2"},
				AfterIssue: Retirement{Retire: &entryrecord.Retiring{Credential: *k2, Until: now.Add(credentials.DefaultGracePeriod)}},
				Instead:    Retirement{Revoke: []entryrecord.Credential{all(k2)}}}},
		{name: "request honoured by a fresh issuance (the secret holds another entry's record): the request is honoured, recorded and removed",
			got:  Decide(with(holding(on, "k1", nil), func(o *Observed) { o.Ours, o.Owned, o.RotationRequest = false, &no, "r1" })),
			want: Plan{Publish: PublishIssued, Rotation: &Rotation{Reason: RotationRequested, Request: "r1"}}},
		{name: "request honoured by a fresh issuance: the record says it honoured, the request removed, no retirement",
			got: DecideSettle(written(k2, func(o *SettleObserved) {
				o.Issued, o.Rotation = true, &Rotation{Reason: RotationRequested, Request: "r1"}
			})),
			want: SettlePlan{Steps: []SettleStep{honoured(recordStep(k2, nil, nil), "r1"), endStep(time.Time{}), issuedStep(k2), {Kind: SettleRemoveRequest, Request: "r1"}},
				Condition: ownCondition(k2)}},
		{name: "finding 2: rotate by period, retire for a grace that ends: the end step records the retirement's end, for the scheduler to end it then",
			got: DecideSettle(written(k2, func(o *SettleObserved) {
				o.Rotation, o.Retire = &Rotation{Reason: RotationByPeriod}, &entryrecord.Retiring{Credential: *k1old, Until: now.Add(time.Hour)}
			})),
			want: SettlePlan{Steps: []SettleStep{recordStep(k2, nil, &entryrecord.Retiring{Credential: *k1old, Until: now.Add(time.Hour)}), endStep(now.Add(time.Hour)),
				{Kind: SettleRetire, Credential: *k1old, Until: now.Add(time.Hour), Event: &Event{Type: "Normal", Reason: ReasonEntryCredentialRotated,
					Message: "Rotated the entry's credential (period): etcd-backup holds k2 of issuer X; the previous one k1 stays valid until 2026-06-01T13:00:00Z (rotation.gracePeriod), then it ends"}}},
				Condition: ownCondition(k2)}},
		{name: "finding 2: the scheduler wakes the entry at its retired credential's end, with no period",
			got: dueOf(Due(on, "", entryrecord.Record{Entry: "e", Published: k1, NextEnd: now.Add(10 * time.Minute)}, now)), want: due{now.Add(10 * time.Minute), true}},
		{name: "retire with gracePeriod 0s: revoked at once, keeping the published one",
			got: DecideSettle(written(k2, func(o *SettleObserved) {
				o.Rotation, o.Retire = &Rotation{Reason: RotationByPeriod}, &entryrecord.Retiring{Credential: *k1, Until: now}
			})),
			want: SettlePlan{Steps: []SettleStep{recordStep(k2, nil, &entryrecord.Retiring{Credential: *k1, Until: now}), endStep(time.Time{}),
				{Kind: SettleRetire, Credential: *k1, Until: now, AtOnce: true, Keep: []string{"k2"}, Event: &Event{Type: "Normal", Reason: ReasonEntryCredentialRotated,
					Message: "Rotated the entry's credential (period): etcd-backup holds k2 of issuer X; the previous one k1 stays valid now (gracePeriod 0s): revoked"}}},
				Condition: ownCondition(k2)}},
		{name: "retire again on a steady pass (its retirement failed before): retired, no rotation event",
			got: DecideSettle(written(k1, func(o *SettleObserved) { o.Retire = retiring })),
			want: SettlePlan{Steps: []SettleStep{recordStep(k1, nil, retiring), endStep(retiring.Until), {Kind: SettleRetire, Credential: *k0, Until: retiring.Until}},
				Condition: ownCondition(k1)}},
		{name: "switch-off: the bucket's credential recorded as none of the entry's, every credential of the place revoked, False/BucketWide",
			got:  DecideSettle(written(nil, func(o *SettleObserved) { o.Revoke = []entryrecord.Credential{all(k1)} })),
			want: SettlePlan{Steps: []SettleStep{recordStep(nil, []entryrecord.Credential{all(k1)}, nil), revokeStep(all(k1))}, Condition: bucketWideCondition}},
		{name: "quota fallback: the bucket's credential at quota, the warning event the first time",
			got: DecideSettle(written(nil, func(o *SettleObserved) { o.AtQuota = true })),
			want: SettlePlan{Steps: []SettleStep{recordStep(nil, nil, nil)},
				Condition: &SettleCondition{Status: "False", Reason: ReasonBucketWideAtQuota, Message: "reach", Isolation: "bucket_wide_at_quota", FallbackEvent: true}}},
		{name: "quota fallback said before: no second event",
			got: DecideSettle(written(nil, func(o *SettleObserved) { o.AtQuota, o.PriorReason = true, ReasonBucketWideAtQuota })),
			want: SettlePlan{Steps: []SettleStep{recordStep(nil, nil, nil)},
				Condition: &SettleCondition{Status: "False", Reason: ReasonBucketWideAtQuota, Message: "reach", Isolation: "bucket_wide_at_quota"}}},

		// A Migrate (MigrationRetiree): what is left behind to retire for the migration grace.
		{name: "migrate: the published credential is left behind, to retire for the migration grace",
			got: retireeOf(MigrationRetiree(*steady, true, nil)), want: retiree{"k1", false}},
		{name: "migrate after a restart lost the record: the intent's, found by its ID in the data",
			got: retireeOf(MigrationRetiree(entryrecord.Record{Entry: "e"}, true, &entryrecord.Intent{Published: k2})), want: retiree{"k2", true}},
		{name: "migrate: another entry's record (a re-created shoot): none of this entry's",
			got: retireeOf(MigrationRetiree(entryrecord.Record{Entry: "e"}, false, &entryrecord.Intent{Published: k2})), want: retiree{}},
		{name: "migrate back within the grace: this seed's secret holds the bucket's credential: a new issuance, the retiring one left to end at its time",
			got: Decide(holding(on, "bucket-1", nil)), want: Plan{Publish: PublishIssued}},

		// A Migrate (DecideMigrate): what it does with the credential it leaves behind.
		{name: "migrate: retired for the migration grace, then it ends",
			got: DecideMigrate(MigrateObserved{Retiree: *k1, HeldID: "k1", Grace: time.Hour, Now: now}), want: MigratePlan{Action: MigrateRetire, Until: now.Add(time.Hour)}},
		{name: "migrate: the seed's configuration is awaited: the Migrate waits for it (retried)",
			got: DecideMigrate(MigrateObserved{Retiree: *k1, Pending: errPending, Grace: time.Hour, Now: now}), want: MigratePlan{Action: MigrateWait, Err: errPending}},
		{name: "migrate: the issuer cannot be built for a while: the Migrate waits (retried)",
			got:  DecideMigrate(MigrateObserved{Retiree: *k1, IssuerErr: errBuild, Now: now}),
			want: MigratePlan{Action: MigrateWait, Err: fmt.Errorf("building issuer X to retire the entry's credential k1: %w", errBuild)}},
		{name: "finding 6: the issuer cannot be built from the operator's configuration: the Migrate goes on, an event says why (the first issuance on the new seed revokes it)",
			got: DecideMigrate(MigrateObserved{Retiree: *k1, IssuerErr: errInvalid, InvalidConfig: true, Now: now}), want: MigratePlan{Action: MigrateCannot, Why: errInvalid.Error()}},
		{name: "finding 6: the operator's credentials build no such issuer now: the Migrate goes on",
			got: DecideMigrate(MigrateObserved{Retiree: *k1, NoIssuer: true, Now: now}), want: MigratePlan{Action: MigrateCannot, Why: "the operator's credentials build no such issuer now"}},
		{name: "migrate after a restart: the write the intent announced did not happen (the data holds another ID): nothing to retire",
			got: DecideMigrate(MigrateObserved{Retiree: *k2, ByID: true, HeldID: "bucket-1", Now: now}), want: MigratePlan{}},
		{name: "migrate after a restart: the intent's credential is in the data: retired",
			got: DecideMigrate(MigrateObserved{Retiree: *k2, ByID: true, HeldID: "k2", Grace: time.Hour, Now: now}), want: MigratePlan{Action: MigrateRetire, Until: now.Add(time.Hour)}},

		// A deletion: what the entry keeps before the secret goes (KeptForDeletion), then what it revokes (DeletionRevocations).
		{name: "entry deletion: the record's credentials and the intent's kept on the entry before the secret goes",
			got:  KeptForDeletion(entryrecord.Kept{Intent: &entryrecord.Intent{Published: k2}}, entryrecord.Record{Entry: "e", Published: k1, Unrevoked: []entryrecord.Credential{gone1}, Retiring: retiring}),
			want: []entryrecord.Credential{*k1, gone1, *k0, *k2}},
		{name: "entry deletion after a restart: what was kept stays (the secret may be gone)",
			got: KeptForDeletion(entryrecord.Kept{ForDeletion: []entryrecord.Credential{*k1}}, entryrecord.Record{Entry: "e"}), want: []entryrecord.Credential{*k1}},
		{name: "entry deletion, nothing of the entry's: nothing kept",
			got: len(KeptForDeletion(entryrecord.Kept{}, entryrecord.Record{Entry: "e"})), want: 0},
		{name: "entry deletion: every recorded issuer and access (its first place), and the configured issuer's, each once",
			got:  DeletionRevocations([]entryrecord.Credential{*k1, *k0, *cred("k9", "q", 0)}, &credentials.EntrySettings{Issuer: "Y"}, rw),
			want: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}, {Issuer: "Y", Access: rw}}},
		{name: "entry deletion, switched off: the recorded ones only",
			got: DeletionRevocations([]entryrecord.Credential{*k1}, nil, rw), want: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}}},
		{name: "entry deletion: the kept records and the configured issuer's revoked",
			got:  DecideDeletion(DeletionObserved{Kept: []entryrecord.Credential{*k1}, Settings: &credentials.EntrySettings{Issuer: "Y"}, Access: rw}),
			want: DeletionPlan{Revoke: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}, {Issuer: "Y", Access: rw}}}},
		{name: "entry deletion, the settings unreadable: waits (not knowing the configured issuer is not knowing whether it holds one)",
			got:  DecideDeletion(DeletionObserved{Kept: []entryrecord.Credential{*k1}, SettingsErr: errInvalid, Access: rw}),
			want: DeletionPlan{Err: fmt.Errorf("the deleted entry's credentials of the configured issuer: %w", errInvalid)}},
		{name: "entry deletion of a garden's entry: nothing revoked (it keeps its bucket's credential), whatever the settings say",
			got: DecideDeletion(DeletionObserved{Garden: true, Settings: on, SettingsErr: errInvalid, Access: rw}), want: DeletionPlan{}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if !reflect.DeepEqual(r.got, r.want) {
				t.Fatalf("got\n %+v\nwant\n %+v", r.got, r.want)
			}
		})
	}
}

func withSettle(o SettleObserved, change func(*SettleObserved)) SettleObserved { change(&o); return o }
