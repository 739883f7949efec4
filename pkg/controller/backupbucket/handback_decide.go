// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The hand-back (providerConfig handBack) as a pure decision: decideHandBack takes what one pass
// observed after the bucket converged and the credential lifecycle ran, and returns the plan
// that handBackExecution carries out. A hand-back that cannot finish yet is not an error: the
// pass succeeds (gardenlet syncs the secrets the hand-back waits for only while the bucket
// succeeds), condition HandBack says what it waits for, and the scheduler asks for the next
// look (handBackDue). It finishes by itself once nothing it waits for is left.

// ConditionHandBack on a BackupBucket says where its hand-back is: True/HandedBack once nothing
// of this extension outlives the switch back; False while the operator must change the
// configuration (ReasonHandBackSettings) or the store (ReasonHandBackStore, by hand); Progressing
// while it waits for what moves by itself (the store's own rules, secrets being synced, the
// kubelet's copy, a sweep tried again). Absent without handBack.
// Entries read it (entryinfo.HandedBack): they are released from entryinfo.FinalizerName only
// once it is True.
const ConditionHandBack = entryinfo.ConditionHandBack

// Reasons of ConditionHandBack.
const (
	ReasonHandBackSettings   = "WaitingForSettings"
	ReasonHandBackStore      = "WaitingForStore"
	ReasonHandBackSecrets    = "WaitingForSecrets"
	ReasonHandBackSettling   = "Settling"
	ReasonHandBackPrincipals = "EntryPrincipalsLeft"
	ReasonHandBackReleasing  = entryinfo.ReasonHandBackReleasing
	ReasonHandedBack         = "HandedBack"
)

// ReasonHandBackWaiting is the event reason of a hand-back that waits, emitted when the reason
// of ConditionHandBack changes to a waiting one.
const ReasonHandBackWaiting = "HandBackWaiting"

// HandBackSettle is how long the secrets must have held the operator's credentials before the
// hand-back revokes the generated credentials they held: the kubelet updates the files it
// projects from etcd-backup into the etcd pods within its sync period (about a minute), and a
// snapshot taken with the old files after the revocation fails.
const HandBackSettle = 2 * time.Minute

// holdersNamed is how many of the secrets that still hold a credential to be revoked a waiting
// hand-back names.
const holdersNamed = 5

// handBackObserved is what one pass of the hand-back reads before it decides.
type handBackObserved struct {
	// generated names the credentials the generated secret records after this pass's credential
	// lifecycle ("" none); storeKeys says they are keys of the store, which the provider
	// extension taking the bucket back uses as its own (objectstore.StoreKeysIssuer).
	generated string
	storeKeys bool
	// generating: generatedCredentials is still asked for and its issuer is built.
	generating bool
	// entryCredentials is the entry issuer the configuration names ("" off).
	entryCredentials string
	// entryIssuers is the bucket's record of entry issuers and the places each issued in
	// (AnnotationEntryIssuers), as this pass left it: with the places the entries' own records
	// name (reconcileEntryIssuers), less those the operator removed by hand.
	entryIssuers entryIssuers
	// holders are the secrets on the seed that the bucket's shoots read and that do not hold
	// the operator's credentials; read only when needsSecrets.
	holders holders
	// store is EnsureBucket's answer that the store cannot be handed back yet (nil: it can):
	// what is left in the bucket that the provider extension taking it back would not handle.
	store *objectstore.HandBackWaitError
	// settlingSince is when condition HandBack turned Settling (zero: it is not Settling).
	settlingSince time.Time
	now           time.Time
}

// holders counts and names (namespace/name, a few) the secrets that do not hold the operator's
// credentials yet; stale names the BackupEntries whose secret does but whose etcd-backup
// secret does not: their own reconcile rewrites it.
type holders struct {
	count int
	first []string
	stale []string
}

// revokesGenerated says whether the hand-back must revoke generated credentials.
func (o handBackObserved) revokesGenerated() bool { return o.generated != "" && !o.storeKeys }

// needsSecrets says whether the hand-back reads the secrets on the seed: only when it revokes
// something a shoot may hold.
func (o handBackObserved) needsSecrets() bool {
	return o.settingsWanted() == "" && (o.revokesGenerated() || len(o.entryIssuers) > 0)
}

// settingsWanted names what the configuration must no longer ask for ("" nothing).
func (o handBackObserved) settingsWanted() string {
	var want []string
	if o.generating && !o.storeKeys {
		want = append(want, fmt.Sprintf("generatedCredentials (generated credential %q is still published; the provider extension taking the bucket back neither knows nor revokes it)", o.generated))
	}
	if o.entryCredentials != "" {
		want = append(want, fmt.Sprintf("entryCredentials (issuer %s still gives every entry a principal of its own, which the provider extension taking the bucket back neither knows nor revokes)", o.entryCredentials))
	}
	return strings.Join(want, " and ")
}

// A step of a hand-back plan. Each is one of the types below.
type handBackStep interface{ String() string }

// handBackWaitStep sets condition HandBack to status/reason/message and ends the plan: the pass
// succeeds, and the scheduler asks for the next look. nudge names BackupEntries asked for a
// reconcile (the operation annotation), whose own reconcile rewrites what the hand-back waits for.
type handBackWaitStep struct {
	status  gardencorev1beta1.ConditionStatus
	reason  string
	message string
	nudge   []string
}

// revokeGeneratedStep revokes every generated credential the generated secret records, ahead of
// the retirement's time (completeRetirement).
type revokeGeneratedStep struct{}

// sweepEntryPrincipalsStep sweeps every principal that entry issuer issuer made for the
// bucket's entries in location (the live entries' too: they hold the operator's credentials by
// now), and drops the place from the record once nothing is left there. What is left there, or
// cannot be swept there (a refusal; credentials that build no such issuer or reach another place
// now), is kept for principalsLeftStep.
type sweepEntryPrincipalsStep struct{ issuer, location string }

// principalsLeftStep ends the plan waiting (ReasonHandBackPrincipals) when the sweeps before it
// left any principal, naming each issuer and place and why.
type principalsLeftStep struct{}

// releasingStep sets condition HandBack Progressing/ReleasingEntries (entryinfo.HandedBack),
// before releaseEntriesStep lists the entries.
type releasingStep struct{}

// releaseEntriesStep removes this extension's finalizer from every BackupEntry of the bucket
// (entryinfo.ReleaseEntriesOf).
type releaseEntriesStep struct{}

// releaseMarksStep converges the bucket once more with objectstore.Bucket.HandBackComplete: the
// provider removes the marks that make the bucket this extension's. It comes only after every
// other step, so that a hand-back that waits keeps them (and unsetting handBack meanwhile finds
// the bucket still this extension's). A store that cannot be handed back after all (something
// changed since the pass's first look) ends the plan waiting, as decideHandBack's step 2.
type releaseMarksStep struct{}

// handedBackStep sets condition HandBack True/HandedBack.
type handedBackStep struct{ message string }

func (s handBackWaitStep) String() string {
	nudge := ""
	if len(s.nudge) > 0 {
		nudge = " nudge " + strings.Join(s.nudge, ",")
	}
	return fmt.Sprintf("wait %s/%s%s", s.status, s.reason, nudge)
}
func (revokeGeneratedStep) String() string        { return "revoke generated" }
func (s sweepEntryPrincipalsStep) String() string { return "sweep " + s.issuer + "@" + s.location }
func (principalsLeftStep) String() string         { return "wait if principals left" }
func (releasingStep) String() string              { return "status Progressing/ReleasingEntries" }
func (releaseEntriesStep) String() string         { return "release entries" }
func (releaseMarksStep) String() string           { return "release marks" }
func (handedBackStep) String() string             { return "status True/HandedBack" }

// decideHandBack is the plan of one pass of the hand-back:
//
//  1. generatedCredentials or entryCredentials still asked for: wait (False), naming them: the
//     credentials they give out would stay valid for good, and revoking them while they are
//     asked for would only make the next pass issue new ones.
//  2. The store cannot be handed back yet (EnsureBucket's objectstore.HandBackWaitError): wait,
//     False when only the operator removes the cause, Progressing when it goes by itself;
//     nothing is revoked meanwhile, so unsetting handBack still keeps everything working.
//  3. A secret the bucket's shoots read still holds something else than the operator's
//     credentials (a generated credential, an entry's own): wait (Progressing), naming them;
//     entries whose own reconcile rewrites their etcd-backup secret are asked for one.
//  4. Generated credentials to revoke: wait HandBackSettle after the secrets moved (Settling,
//     the kubelet's copy), then revoke them.
//  5. Sweep every recorded entry issuer's principals of the bucket in every recorded place, all of
//     them; wait (Progressing) while any is left, naming it.
//  6. Progressing/ReleasingEntries, release the entries, then HandedBack: an entry lets go of
//     entryinfo.FinalizerName by itself only once the condition says ReleasingEntries or True
//     (entryinfo.HandedBack), so an entry that adds it while this pass runs either sees that
//     after its add, or is added before the release's listing and is found there.
//  7. Between the two, the provider removes this extension's marks from the bucket
//     (releaseMarksStep): only once nothing else is waited for.
func decideHandBack(o handBackObserved) []handBackStep {
	if want := o.settingsWanted(); want != "" {
		return []handBackStep{handBackWaitStep{status: gardencorev1beta1.ConditionFalse, reason: ReasonHandBackSettings,
			message: "The hand-back waits: remove " + want + " from the configuration; the hand-back then finishes by itself once the shoots' secrets hold the operator's credentials"}}
	}
	if o.store != nil {
		return []handBackStep{storeWaitStep(o.store)}
	}
	var plan []handBackStep
	if o.needsSecrets() && o.holders.count > 0 {
		more := ""
		if o.holders.count > len(o.holders.first) {
			more = fmt.Sprintf(" and %d more", o.holders.count-len(o.holders.first))
		}
		return []handBackStep{handBackWaitStep{status: gardencorev1beta1.ConditionProgressing, reason: ReasonHandBackSecrets, nudge: slices.Clone(o.holders.stale),
			message: fmt.Sprintf("The hand-back waits for %d secrets on this seed that the bucket's shoots read to hold the operator's credentials (%s%s): %s; gardenlet syncs the entries' secrets while this BackupBucket succeeds, and each entry's reconcile rewrites its etcd-backup secret",
				o.holders.count, strings.Join(o.holders.first, ", "), more, o.revoking())}}
	}
	if o.revokesGenerated() {
		if o.settlingSince.IsZero() || o.now.Before(o.settlingSince.Add(HandBackSettle)) {
			return []handBackStep{handBackWaitStep{status: gardencorev1beta1.ConditionProgressing, reason: ReasonHandBackSettling,
				message: fmt.Sprintf("Every secret on this seed that the bucket's shoots read holds the operator's credentials; generated credential %q is revoked %s after this condition's lastUpdateTime, once the kubelet has updated the etcd pods' copies", o.generated, HandBackSettle)}}
		}
		plan = append(plan, revokeGeneratedStep{})
	}
	for _, p := range o.entryIssuers.places() {
		plan = append(plan, sweepEntryPrincipalsStep{issuer: p.Issuer, location: p.Place})
	}
	if len(o.entryIssuers) > 0 {
		plan = append(plan, principalsLeftStep{})
	}
	what := "no credential this extension generated or issued for the bucket or its entries is left valid"
	if o.generated != "" && o.storeKeys {
		what = fmt.Sprintf("its generated credentials %q are keys of the store, which the provider extension taking it back uses as its own; nothing else this extension issued is left valid", o.generated)
	}
	return append(plan, releasingStep{}, releaseEntriesStep{}, releaseMarksStep{}, handedBackStep{message: "The bucket is handed back: " + what + ", and its BackupEntries no longer carry this extension's finalizer"})
}

// storeWaitStep is the wait for a store that cannot be handed back yet: False when only the
// operator removes the cause, Progressing when it goes by itself.
func storeWaitStep(w *objectstore.HandBackWaitError) handBackWaitStep {
	status := gardencorev1beta1.ConditionProgressing
	if w.ByOperator {
		status = gardencorev1beta1.ConditionFalse
	}
	return handBackWaitStep{status: status, reason: ReasonHandBackStore,
		message: "The hand-back waits for the store: " + w.Why + ". Nothing is revoked meanwhile; it is looked at again every minute"}
}

// revoking says what the hand-back revokes once the secrets have moved.
func (o handBackObserved) revoking() string {
	var what []string
	if o.revokesGenerated() {
		what = append(what, fmt.Sprintf("then generated credential %q is revoked", o.generated))
	}
	for _, p := range o.entryIssuers.places() {
		what = append(what, fmt.Sprintf("then the entry principals that issuer %s made for the bucket (in %s) are swept", p.Issuer, orAnywhere(p.Place)))
	}
	return strings.Join(what, "; ")
}

// orAnywhere words a recorded place ("": wherever the operator's credentials reach).
func orAnywhere(location string) string {
	if location == "" {
		return "wherever the operator's credentials reach"
	}
	return location
}
