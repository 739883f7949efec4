// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// What a pass does after gardener's actuator wrote (or did not write) the etcd-backup secret, as
// a pure decision: DecideSettle takes what Data decided (SettleObserved) and returns the steps
// that Credentials.settle carries out in order, stopping at the first failure of a step that is
// not Continue, and the condition it sets in any case. Each step leaves a record that says what
// is still to be done: the record naming every credential still to revoke comes first, and each
// revocation or retirement takes its credential off the record only once it is done.

// SettleObserved is what a pass knows when it settles: what Data decided (its Outcome) and the
// clock.
type SettleObserved struct {
	// Entry is the BackupEntry's name (the record's).
	Entry string
	// Decided: Data decided (gardener's generic actuator may return before it asks for the data).
	Decided bool
	// Written: gardener's actuator wrote the etcd-backup secret (the pass did not fail).
	Written bool
	// Published is the entry's own credential the secret holds now (nil: the bucket's); Issued:
	// this pass issued it.
	Published *entryrecord.Credential
	Issued    bool
	// Revoke and Retire are what the secret no longer holds: to revoke, and the rotated-out one
	// to retire for its grace.
	Revoke []entryrecord.Credential
	Retire *entryrecord.Retiring
	// Rotation is the rotation this pass decided or took up (nil: none).
	Rotation *Rotation
	// NotIssued is why the entry's own credential could not be issued ("": no such error).
	NotIssued string
	// AtQuota: allowBucketCredentialAtQuota published the bucket's credential at the store's quota.
	AtQuota bool
	// Reach says what the published credential reaches; Schedule when it was issued and is
	// rotated next (rotationSchedule).
	Reach, Schedule string
	// PriorReason is the reason of the entry's ConditionEntryCredentials before this pass.
	PriorReason string
	Now         time.Time
}

// SettleKind is what a SettleStep does.
type SettleKind int

const (
	// SettleRecord writes Record as the etcd-backup secret's record (refused when the secret's
	// record is another entry's), then removes the entry's intent, which the record now says.
	SettleRecord SettleKind = iota
	// SettleRevoke revokes Credential's issuer's credentials of its place and access but Keep,
	// then takes Credential off the record's unrevoked ones.
	SettleRevoke
	// SettleEndRetired ends, with the published credential's issuer, the entry's retired
	// credentials whose time has come, and records when the next one ends: the earlier of the
	// issuer's answer and Until (a retirement of this pass; zero: none).
	SettleEndRetired
	// SettleEvent emits Event.
	SettleEvent
	// SettleRemoveRequest removes the rotation request annotation if it still asks for Request.
	SettleRemoveRequest
	// SettleRetire lets Credential stay valid until Until (AtOnce: revokes its issuer's
	// credentials of its place and access but Keep now), then takes it off the record.
	SettleRetire
)

// SettleStep is one step of a SettlePlan; Event, when set, is emitted once the step succeeded.
type SettleStep struct {
	Kind       SettleKind
	Record     entryrecord.Record
	Credential entryrecord.Credential
	Keep       []string
	Until      time.Time
	AtOnce     bool
	Request    string
	Event      *Event
	// Continue: a failure of this step does not stop the steps after it (every revocation is
	// tried and stays on record until it succeeds: finding 7 of issue 44).
	Continue bool
}

// Event is an event on the BackupEntry.
type Event struct{ Type, Reason, Message string }

// SettleCondition is the ConditionEntryCredentials a pass sets, and the isolation metric.
type SettleCondition struct {
	Status          gardencorev1beta1.ConditionStatus
	Reason, Message string
	Isolation       string
	// FallbackEvent: the bucket-wide fallback at the store's quota starts with this pass (the
	// condition did not say it yet): a warning event (ReasonEntryCredentialFallback) says so.
	FallbackEvent bool
}

// SettlePlan is what a pass does after gardener's write: Steps in order, then Condition (nil:
// the condition is left as it is: the pass failed before anything of the entry's credential
// changed).
type SettlePlan struct {
	Steps     []SettleStep
	Condition *SettleCondition
}

// DecideSettle is the settle of a pass over o; it calls nothing.
func DecideSettle(o SettleObserved) SettlePlan {
	if !o.Decided {
		return SettlePlan{}
	}
	p := SettlePlan{}
	if o.Written {
		p.Steps = settleSteps(o)
	}
	if o.Written || o.NotIssued != "" {
		p.Condition = settleCondition(o)
	}
	return p
}

// settleSteps are the steps of a pass whose secret gardener's actuator wrote.
func settleSteps(o SettleObserved) []SettleStep {
	// First the record of every credential still to revoke or retire: a failure or a restart at
	// any later step leaves on record what is still to be done (the intent is removed only then).
	record := entryrecord.Record{Entry: o.Entry, Published: o.Published, Unrevoked: o.Revoke, Retiring: o.Retire}
	if o.Rotation != nil && o.Published != nil {
		// Until SettleRemoveRequest removes it, a later pass sees the request honoured.
		record.Honoured = o.Rotation.Request
	}
	steps := []SettleStep{{Kind: SettleRecord, Record: record}}
	for _, r := range o.Revoke {
		steps = append(steps, SettleStep{Kind: SettleRevoke, Credential: r, Keep: keepOf(o.Published, r), Continue: true,
			Event: &Event{Type: corev1.EventTypeNormal, Reason: ReasonEntryCredentialRevoked, Message: fmt.Sprintf(
				"Revoked the entry's credentials of issuer %s (%s) that its etcd-backup secret no longer holds", r.Issuer, orAll(r.ID))}})
	}
	if o.Published != nil {
		end := SettleStep{Kind: SettleEndRetired, Continue: true}
		if o.Retire != nil && o.Retire.Until.After(o.Now) {
			end.Until = o.Retire.Until
		}
		steps = append(steps, end)
	}
	if o.Issued {
		steps = append(steps, SettleStep{Kind: SettleEvent, Event: &Event{Type: corev1.EventTypeNormal, Reason: ReasonEntryCredentialIssued,
			Message: fmt.Sprintf("The etcd-backup secret holds the entry's own credential %s of issuer %s", o.Published.ID, o.Published.Issuer)}})
	}
	if o.Rotation != nil && o.Rotation.Request != "" {
		steps = append(steps, SettleStep{Kind: SettleRemoveRequest, Request: o.Rotation.Request})
	}
	if r := o.Retire; r != nil {
		retire := SettleStep{Kind: SettleRetire, Credential: r.Credential, Until: r.Until, AtOnce: !r.Until.After(o.Now)}
		if retire.AtOnce {
			retire.Keep = keepOf(o.Published, r.Credential)
		}
		if o.Rotation != nil && o.Published != nil {
			until := "now (gracePeriod 0s): revoked"
			if !retire.AtOnce {
				until = "until " + r.Until.UTC().Format(time.RFC3339) + " (rotation.gracePeriod), then it ends"
			}
			retire.Event = &Event{Type: corev1.EventTypeNormal, Reason: ReasonEntryCredentialRotated, Message: fmt.Sprintf(
				"Rotated the entry's credential (%s): etcd-backup holds %s of issuer %s; the previous one %s stays valid %s",
				o.Rotation.Reason, o.Published.ID, o.Published.Issuer, r.ID, until)}
		}
		steps = append(steps, retire)
	}
	return steps
}

// keepOf is what a revocation of r's issuer, place and access keeps: the published credential
// when it is of the same.
func keepOf(published *entryrecord.Credential, r entryrecord.Credential) []string {
	if published != nil && published.SamePlace(r) {
		return []string{published.ID}
	}
	return nil
}

// settleCondition is the condition of a pass whose secret was written, or whose own credential
// could not be issued.
func settleCondition(o SettleObserved) *SettleCondition {
	c := &SettleCondition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonBucketWide, Message: o.Reach, Isolation: metrics.IsolationBucketWide}
	switch {
	case o.NotIssued != "":
		c.Reason, c.Message = ReasonNotIssued, o.NotIssued
	case o.Published != nil:
		c.Status, c.Reason, c.Isolation = gardencorev1beta1.ConditionTrue, ReasonOwnPrefix, metrics.IsolationOwnPrefix
		c.Message = fmt.Sprintf("the etcd-backup secret holds credential %s of issuer %s (in %s): %s%s", o.Published.ID, o.Published.Issuer, o.Published.IssuedIn, o.Reach, o.Schedule)
	case o.AtQuota:
		c.Reason = ReasonBucketWideAtQuota
	}
	if o.AtQuota && (o.Published == nil || o.NotIssued != "") {
		c.Isolation, c.FallbackEvent = metrics.IsolationBucketWideAtQuota, o.PriorReason != ReasonBucketWideAtQuota
	}
	return c
}

// NextEnd is when the entry's next retired credential ends: the earlier of the issuer's answer
// and until (zero: none).
func NextEnd(issuer, until time.Time) time.Time {
	if !until.IsZero() && (issuer.IsZero() || until.Before(issuer)) {
		return until
	}
	return issuer
}
