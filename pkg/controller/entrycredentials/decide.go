// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package entrycredentials gives BackupEntries their own credentials (entryCredentials), in the
// shape of the bucket's generated ones: a pass observes the entry, its record, its settings, the
// issuer's answers and the clock (Observed), Decide makes of them a Plan without any call
// (DecideRefusal when the issuer refuses), and Credentials executes the plan's steps before
// gardener's write (ask, revoke first, issue, publish: Data); after the write DecideSettle plans
// the steps that record, revoke, end, retire and set the condition, and Settle carries them out
// in order. MigrationRetiree and DecideMigrate are a Migrate's decisions, KeptForDeletion and
// DecideDeletion (DeletionRevocations) a deletion's, Due the rotation scheduler's. The record itself is package
// entryrecord's.
package entrycredentials

import (
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Reasons of a rotation (Rotation.Reason).
const (
	RotationByPeriod  = "period"
	RotationRequested = "requested"
)

// Rotation is a rotation a pass decided or took up: why, and the value of the rotation request
// annotation it honours ("": none).
type Rotation struct{ Reason, Request string }

// Observed is what a pass knows before it decides.
type Observed struct {
	// Access is the entry's (read-only for a source- entry).
	Access objectstore.EntryAccess
	// Settings are the entry's entryCredentials (nil: off; read only when BucketWide is "").
	Settings *credentials.EntrySettings
	// BucketWide says why the entry keeps its bucket's credential before any issuer is asked
	// (off, a garden's entry, a workload identity, a provider that issues none); "": its own.
	BucketWide string
	// SecretExists: the etcd-backup secret exists. Record is the entry's record on it, Ours
	// whether the secret's record is the entry's at all (entryrecord.Read).
	SecretExists bool
	Record       entryrecord.Record
	Ours         bool
	// Intent is what the entry kept of a pass a restart may have cut short (nil: none).
	Intent *entryrecord.Intent
	// Asked of the configured issuer (when BucketWide is ""): HeldID is the ID of the credential
	// the secret's data holds, BucketID that of the bucket's credential, Location where the
	// issuer issues now. Owned is its answer whether it owns HeldID for this entry (nil: not
	// asked; Decide asks for it with Plan.AskOwns).
	HeldID, BucketID, Location string
	Owned                      *bool
	// RotationRequest is the entry's rotation request annotation ("": none).
	RotationRequest string
	Now             time.Time
}

// Publish is what the etcd-backup secret is to hold.
type Publish int

const (
	// PublishBucket publishes the bucket's credential.
	PublishBucket Publish = iota
	// PublishRecorded keeps the entry's own recorded credential (Plan.Published).
	PublishRecorded
	// PublishIssued issues a new credential of the entry and publishes it.
	PublishIssued
)

// Plan is what a pass does, in order: AskOwns (then decide again); RevokeFirst; issue (with
// InUse kept) when Publish is PublishIssued; the generic actuator's write; then record, revoke
// Revoke and retire Retire (once the secret is written).
type Plan struct {
	// AskOwns is a credential ID to ask the issuer about (Observed.Owned) before deciding.
	AskOwns string
	Publish Publish
	// BucketWide is why the bucket's credential is published (PublishBucket).
	BucketWide string
	// Published is the recorded credential kept (PublishRecorded).
	Published *entryrecord.Credential
	// Recorded is the entry's credential the secret holds now (nil: none known).
	Recorded *entryrecord.Credential
	// RevokeFirst: before issuing, every credential of the entry but Recorded goes (a rotation:
	// the entry never holds more than the published one and the one it replaces).
	RevokeFirst bool
	// InUse are IDs the issuance keeps valid.
	InUse []string
	// Revoke and Retire are the credentials to revoke and the rotated-out one to retire once
	// the secret no longer holds them.
	Revoke []entryrecord.Credential
	Retire *entryrecord.Retiring
	// Rotation is the rotation decided or taken up (nil: none).
	Rotation *Rotation
	// TakenUp: the intent of a pass a restart cut short was taken up.
	TakenUp bool
	// AfterIssue is what an issuance adds to Revoke and Retire: Recorded revoked, or at a
	// rotation retired for the grace.
	AfterIssue Retirement
	// Instead is what is revoked and retired when the bucket's credential is published instead
	// of an issuance the issuer refused (DecideRefusal).
	Instead Retirement
}

// Retirement is a set of credentials to revoke and one to retire.
type Retirement struct {
	Revoke []entryrecord.Credential
	Retire *entryrecord.Retiring
}

// Decide is the pass's decision over o; it calls nothing.
func Decide(o Observed) Plan {
	p := Plan{}
	var recorded *entryrecord.Credential
	if o.Ours {
		recorded = o.Record.Published
		p.Revoke = append(p.Revoke, o.Record.Unrevoked...)
		p.Retire = o.Record.Retiring
	} else if o.SecretExists && o.Intent != nil {
		// Another entry of the shoot namespace wrote the secret after this entry's pass wrote
		// it, and refused that pass its record (finding 9 of issue 44): the entry's intent is
		// the only list of what it still has to revoke and retire. The secret holds none of it
		// (unless the issuer owns the held ID for this entry: that one is kept).
		if pub := o.Intent.Published; pub != nil && pub.ID != o.HeldID {
			p.Revoke = append(p.Revoke, *pub)
		}
		p.Revoke = append(p.Revoke, o.Intent.Revoke...)
		p.Retire = o.Intent.Retire
	}
	// An intent is the record a restart lost after gardener's write: the secret holds nothing
	// recorded of the entry's, and its last writer is the entry.
	lost := recorded == nil && o.SecretExists && o.Ours && o.Intent != nil
	if o.BucketWide != "" {
		p.Publish, p.BucketWide = PublishBucket, o.BucketWide
		p.Revoke = append(p.Revoke, all(recorded)...)
		if lost {
			// The intent's published credential was issued whether or not gardener's write
			// happened: it goes with every credential of its issuer's place, as a recorded one.
			p.Revoke = append(p.Revoke, all(o.Intent.Published)...)
			p.takeUp(o.Intent)
		}
		return p
	}
	// The pass that published the entry's own credential: the secret holds what it announced.
	if lost && o.Intent.Published != nil && o.Intent.Published.ID == o.HeldID {
		recorded = o.Intent.Published
		p.takeUp(o.Intent)
		if o.Intent.Rotation != "" {
			p.Rotation = &Rotation{Reason: o.Intent.Rotation, Request: o.Intent.Request}
		}
	}
	// A credential published by a pass whose record a restart lost, with no intent (an earlier
	// build's): the data holds an ID that is not the bucket's credential's and that the
	// configured issuer owns for this entry.
	if recorded == nil && !p.TakenUp && o.SecretExists && o.HeldID != "" && o.HeldID != o.BucketID {
		if o.Owned == nil {
			return Plan{AskOwns: o.HeldID}
		}
		if *o.Owned {
			recorded = &entryrecord.Credential{ID: o.HeldID, Issuer: o.Settings.Issuer, IssuedIn: o.Location, Access: o.Access}
		}
	}
	p.Recorded = recorded
	here := recorded != nil && recorded.Issuer == o.Settings.Issuer && recorded.IssuedIn == o.Location && recorded.Access == o.Access
	if here && o.HeldID == recorded.ID {
		honoured := p.Rotation
		if honoured == nil && o.Ours && o.RotationRequest != "" && o.Record.Honoured == o.RotationRequest {
			// The published credential was issued for this request: its pass was cut short (or
			// failed) before it removed the request. This pass finishes it (retires what is on
			// record, removes the request) and rotates nothing.
			honoured = &Rotation{Reason: RotationRequested, Request: o.RotationRequest}
			p.Rotation = honoured
		}
		if honoured == nil {
			p.Rotation = rotationDue(o, recorded)
		}
		if honoured != nil || p.Rotation == nil {
			kept := *recorded
			kept.IssuedAt = IssuedAt(recorded, o.Now)
			p.Publish, p.Published = PublishRecorded, &kept
			return p
		}
		// A rotation: a previous rotation's credential still retiring goes now.
		p.RevokeFirst, p.Retire = true, nil
	}
	p.Publish = PublishIssued
	if here {
		p.InUse = []string{recorded.ID}
	}
	switch {
	case p.Rotation != nil:
		p.AfterIssue.Retire = &entryrecord.Retiring{Credential: *recorded, Until: o.Now.Add(o.Settings.RotationGrace())}
	case recorded != nil:
		p.AfterIssue.Revoke = []entryrecord.Credential{*recorded}
	}
	if p.Rotation == nil && o.RotationRequest != "" {
		// Any new credential of the entry honours its rotation request (the secret held another
		// entry's, the bucket's, or one of another issuer or place): the request is recorded
		// as honoured and removed like a rotation's.
		p.Rotation = &Rotation{Reason: RotationRequested, Request: o.RotationRequest}
	}
	// A copy: Revoke and Instead.Revoke never share an array.
	p.Instead.Revoke = append(append(p.Instead.Revoke, p.Revoke...), all(recorded)...)
	p.Instead.Retire = p.Retire
	if lost && !p.TakenUp && o.Intent.Published == nil {
		p.Instead.Revoke = append(p.Instead.Revoke, o.Intent.Revoke...)
		if p.Instead.Retire == nil {
			p.Instead.Retire = o.Intent.Retire
		}
	}
	return p
}

// takeUp adds what the intent still revokes and retires.
func (p *Plan) takeUp(in *entryrecord.Intent) {
	p.TakenUp = true
	p.Revoke = append(p.Revoke, in.Revoke...)
	if p.Retire == nil {
		p.Retire = in.Retire
	}
}

// all is the revocation of every credential of recorded's issuer, place and access (none for nil).
func all(recorded *entryrecord.Credential) []entryrecord.Credential {
	if recorded == nil {
		return nil
	}
	r := *recorded
	r.ID = ""
	return []entryrecord.Credential{r}
}

// rotationDue says why the recorded (published) credential is to be rotated now, or nil.
func rotationDue(o Observed, recorded *entryrecord.Credential) *Rotation {
	switch {
	case o.RotationRequest != "":
		return &Rotation{Reason: RotationRequested, Request: o.RotationRequest}
	case o.Settings.RotationPeriod() > 0 && !o.Now.Before(IssuedAt(recorded, o.Now).Add(o.Settings.RotationPeriod())):
		return &Rotation{Reason: RotationByPeriod}
	}
	return nil
}

// IssuedAt is when recorded was issued. A record without the time (written by a build before
// rotation, or recognised after a lost record) counts from now: its age is unknown, and rotating
// every such entry at once would issue thousands of credentials in one burst.
func IssuedAt(recorded *entryrecord.Credential, now time.Time) time.Time {
	if !recorded.IssuedAt.IsZero() {
		return recorded.IssuedAt
	}
	return now
}

// Refusal is how the issuer refused an issuance.
type Refusal int

const (
	// RefusedOther is any other error.
	RefusedOther Refusal = iota
	// RefusedQuota is the store's quota (objectstore.ErrQuotaExceeded).
	RefusedQuota
	// RefusedForbidden is a refusal of the credentials that issue (objectstore.ErrForbidden or
	// ErrUnauthenticated).
	RefusedForbidden
)

// Fallback is what a pass whose issuance was refused does.
type Fallback int

const (
	// FallbackFail fails the pass: nothing is written, nothing changes hands.
	FallbackFail Fallback = iota
	// FallbackAskBucket asks whether the entry's BackupBucket is on this seed (bucketOnSeed),
	// then decides again.
	FallbackAskBucket
	// FallbackSourceOfAnotherSeed publishes the bucket's credential: a source- entry whose
	// bucket lives on the source seed, where the credentials this seed holds (gardenlet filled
	// the entry's secret with the bucket's generated one) cannot issue (finding 5 of issue 44).
	FallbackSourceOfAnotherSeed
	// FallbackAtQuota publishes the bucket's credential at the store's quota
	// (allowBucketCredentialAtQuota).
	FallbackAtQuota
)

// DecideRefusal decides a pass of plan (Decide(o)) whose issuance was refused; bucketOnSeed is
// nil until asked (FallbackAskBucket). Plan.Instead is what the fallbacks revoke and retire.
func DecideRefusal(o Observed, p Plan, refusal Refusal, bucketOnSeed *bool) Fallback {
	if p.Recorded == nil && refusal == RefusedForbidden && o.Access == objectstore.EntryReadOnly {
		if bucketOnSeed == nil {
			return FallbackAskBucket
		}
		if !*bucketOnSeed {
			return FallbackSourceOfAnotherSeed
		}
	}
	if refusal == RefusedQuota && o.Settings.AllowBucketCredentialAtQuota {
		return FallbackAtQuota
	}
	return FallbackFail
}
