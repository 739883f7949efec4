// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
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

// TestDecide is the entry credential's decision, one row a state or transition of issue 44's
// list, and its findings where a decision was wrong.
func TestDecide(t *testing.T) {
	k1 := cred("k1", "p1", time.Hour)
	k1old := cred("k1", "p1", 25*time.Hour)
	k0 := cred("k0", "p1", 2*time.Hour)
	retiring := &entryrecord.Retiring{Credential: *k0, Until: now.Add(time.Minute)}
	steady := &entryrecord.Record{Entry: "e", Published: k1}
	cases := []struct {
		name string
		in   Observed
		want Plan
	}{
		{name: "issue: no secret yet",
			in:   Observed{Access: rw, Settings: on, BucketID: "bucket-1", Location: "p1", Now: now},
			want: Plan{Publish: PublishIssued}},
		{name: "issue: the secret holds the bucket's credential (a switch-on)",
			in:   holding(on, "bucket-1", nil),
			want: Plan{Publish: PublishIssued}},
		{name: "publish: the recorded credential is kept, its issue time recorded",
			in:   holding(on, "k1", steady),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1}},
		{name: "publish: a record without issue time counts from now (no burst of rotations)",
			in:   holding(period, "k1", &entryrecord.Record{Entry: "e", Published: cred("k1", "p1", 0)}),
			want: Plan{Publish: PublishRecorded, Published: keptAt(cred("k1", "p1", 0)), Recorded: cred("k1", "p1", 0)}},
		{name: "rotate by period: revoke all but the published first, issue keeping it, retire it for the grace",
			in: holding(period, "k1", &entryrecord.Record{Entry: "e", Published: k1old}),
			want: Plan{Publish: PublishIssued, Recorded: k1old, RevokeFirst: true, InUse: []string{"k1"}, Rotation: &Rotation{Reason: RotationByPeriod},
				AfterIssue: Retirement{Retire: &entryrecord.Retiring{Credential: *k1old, Until: now.Add(time.Hour)}},
				Instead:    Retirement{Revoke: []entryrecord.Credential{all(k1old)}}}},
		{name: "rotate on request; a previous rotation's credential still retiring is revoked first, not retired",
			in: with(holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring}), func(o *Observed) { o.RotationRequest = "r1" }),
			want: Plan{Publish: PublishIssued, Recorded: k1, RevokeFirst: true, InUse: []string{"k1"}, Rotation: &Rotation{Reason: RotationRequested, Request: "r1"},
				AfterIssue: Retirement{Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(credentials.DefaultGracePeriod)}},
				Instead:    Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "retire: a rotated-out credential whose retirement is not confirmed is retired again on a steady pass",
			in:   holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring}),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1, Retire: retiring}},
		{name: "finding 7: every unrevoked credential stays to revoke, not the first alone",
			in:   holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1, Unrevoked: []entryrecord.Credential{*cred("a", "gone", 0), *cred("b", "gone", 0)}}),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1, Revoke: []entryrecord.Credential{*cred("a", "gone", 0), *cred("b", "gone", 0)}}},
		{name: "switch-off: the bucket's credential, every credential of the recorded issuer's place revoked after the write",
			in:   with(holding(nil, "k1", &entryrecord.Record{Entry: "e", Published: k1, Retiring: retiring}), func(o *Observed) { o.BucketWide = "off" }),
			want: Plan{Publish: PublishBucket, BucketWide: "off", Revoke: []entryrecord.Credential{all(k1)}, Retire: retiring}},
		{name: "place change: issue where the issuer reaches now, revoke the old one where it was issued",
			in: with(holding(on, "k1", steady), func(o *Observed) { o.Location = "p2" }),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "issuer change: issue with the configured issuer, revoke the old one with its own",
			in: holding(&credentials.EntrySettings{Issuer: "Y"}, "k1", steady),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "source- entry: read-only access; a read-write record is replaced",
			in: with(holding(on, "k1", steady), func(o *Observed) { o.Access = objectstore.EntryReadOnly }),
			want: Plan{Publish: PublishIssued, Recorded: k1, AfterIssue: Retirement{Revoke: []entryrecord.Credential{*k1}},
				Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
		{name: "finding 9: another entry's record on a shared secret is neither reused nor revoked; the held ID is asked of the issuer",
			in:   with(holding(on, "k1", nil), func(o *Observed) { o.Ours = false }),
			want: Plan{AskOwns: "k1"}},
		{name: "finding 9: the issuer does not own the held ID for this entry: issue, nothing of the other's revoked",
			in:   with(holding(on, "k1", nil), func(o *Observed) { o.Ours = false; o.Owned = &no }),
			want: Plan{Publish: PublishIssued}},
		{name: "restart after the write, no intent (an earlier build's): an owned held ID is taken back",
			in:   with(holding(on, "k1", nil), func(o *Observed) { o.Owned = &yes }),
			want: Plan{Publish: PublishRecorded, Published: keptAt(cred("k1", "p1", 0)), Recorded: cred("k1", "p1", 0)}},
		{name: "restart after the write of an issuance: the intent is taken up, its retirement and revocations kept",
			in: with(holding(on, "k2", nil), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p1", time.Minute), Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
					Revoke: []entryrecord.Credential{*k0}, Rotation: RotationRequested, Request: "r1"}
			}),
			want: Plan{Publish: PublishRecorded, Published: cred("k2", "p1", time.Minute), Recorded: cred("k2", "p1", time.Minute), TakenUp: true,
				Revoke: []entryrecord.Credential{*k0}, Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
				Rotation: &Rotation{Reason: RotationRequested, Request: "r1"}}},
		{name: "restart: an intent whose write did not happen is not taken up (the record is still there)",
			in: with(holding(on, "k1", steady), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Published: cred("orphan", "p1", 0)}
			}),
			want: Plan{Publish: PublishRecorded, Published: keptAt(k1), Recorded: k1}},
		{name: "restart after a switch-off's write: the intent's revocations are taken up",
			in: with(holding(nil, "bucket-1", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			}),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true, Revoke: []entryrecord.Credential{all(k1)}}},
		{name: "restart after a switch-off's write, the bucket's credential rotated meanwhile: the intent is still taken up",
			in: with(holding(nil, "bucket-1", nil), func(o *Observed) {
				o.BucketWide, o.BucketID = "off", "bucket-2"
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			}),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true, Revoke: []entryrecord.Credential{all(k1)}}},
		{name: "restart after a rotation's write, then a switch-off: the intent's published credential is revoked with its issuer's place, its retirement and revocations kept",
			in: with(holding(nil, "k2", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p1", time.Minute), Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)},
					Revoke: []entryrecord.Credential{*k0}, Rotation: RotationRequested, Request: "r1"}
			}),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true,
				Revoke: []entryrecord.Credential{all(cred("k2", "p1", time.Minute)), *k0}, Retire: &entryrecord.Retiring{Credential: *k1, Until: now.Add(time.Hour)}}},
		{name: "restart after an issuance's write, then a switch-off: the intent's published credential is revoked with its issuer's place",
			in: with(holding(nil, "k2", nil), func(o *Observed) {
				o.BucketWide = "off"
				o.Intent = &entryrecord.Intent{Published: cred("k2", "p2", time.Minute), Revoke: []entryrecord.Credential{*k1}}
			}),
			want: Plan{Publish: PublishBucket, BucketWide: "off", TakenUp: true,
				Revoke: []entryrecord.Credential{all(cred("k2", "p2", time.Minute)), *k1}}},
		{name: "quota: a switch-off's intent left untaken is revoked by the bucket-wide fallback",
			in: with(holding(on, "bucket-1", nil), func(o *Observed) {
				o.Intent = &entryrecord.Intent{Revoke: []entryrecord.Credential{all(k1)}}
			}),
			want: Plan{Publish: PublishIssued, Instead: Retirement{Revoke: []entryrecord.Credential{all(k1)}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.in)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Decide =\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
}

// TestDecideRefusal: a pass whose issuance the issuer refused.
func TestDecideRefusal(t *testing.T) {
	ro := objectstore.EntryReadOnly
	atQuota := &credentials.EntrySettings{Issuer: "X", EntryGeneration: credentials.EntryGeneration{AllowBucketCredentialAtQuota: true}}
	source := Observed{Access: ro, Settings: on, SecretExists: true, Ours: true, HeldID: "bucket-1", BucketID: "bucket-1", Location: "p1", Now: now}
	k1 := cred("k1", "p1", time.Hour)
	cases := []struct {
		name         string
		in           Observed
		refusal      Refusal
		bucketOnSeed *bool
		want         Fallback
	}{
		{name: "finding 5: a source- entry refused: ask whether its bucket is on this seed", in: source, refusal: RefusedForbidden, want: FallbackAskBucket},
		{name: "finding 5: a source- entry whose bucket lives on the source seed (generated credentials): the bucket's credential", in: source, refusal: RefusedForbidden, bucketOnSeed: &no, want: FallbackSourceOfAnotherSeed},
		{name: "a source- entry whose bucket is on this seed (operator's credentials refused): fails", in: source, refusal: RefusedForbidden, bucketOnSeed: &yes, want: FallbackFail},
		{name: "a read-write entry refused: fails", in: with(source, func(o *Observed) { o.Access = rw }), refusal: RefusedForbidden, want: FallbackFail},
		{name: "a source- entry with a credential of its own on record refused: fails (keeps it)", in: with(source, func(o *Observed) {
			o.Record, o.HeldID = entryrecord.Record{Entry: "e", Published: &entryrecord.Credential{ID: "k1", Issuer: "X", IssuedIn: "p0", Access: ro}}, "k1"
		}), refusal: RefusedForbidden, want: FallbackFail},
		{name: "quota: fails, the secret unchanged", in: holding(on, "k1", &entryrecord.Record{Entry: "e", Published: k1}), refusal: RefusedQuota, want: FallbackFail},
		{name: "quota with allowBucketCredentialAtQuota: the bucket's credential", in: holding(atQuota, "bucket-1", nil), refusal: RefusedQuota, want: FallbackAtQuota},
		{name: "another error with allowBucketCredentialAtQuota: fails", in: holding(atQuota, "bucket-1", nil), refusal: RefusedOther, want: FallbackFail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DecideRefusal(c.in, Decide(c.in), c.refusal, c.bucketOnSeed); got != c.want {
				t.Fatalf("DecideRefusal = %v; want %v", got, c.want)
			}
		})
	}
}
