// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// wantRotated checks that the secret publishes a new credential, recorded as issued now, and
// that previous stays valid until about now + grace (0: revoked).
func (f *entryCredFixture) wantRotated(previous string, grace time.Duration, before time.Time) string {
	f.t.Helper()
	id := f.published()
	r := f.record()
	if id == previous || r.Published == nil || r.Published.ID != id || r.Retiring != nil {
		f.t.Fatalf("published %q, record %+v; want a new credential than %s, recorded, no retirement pending", id, r, previous)
	}
	if at := r.Published.IssuedAt; at.Before(before.Truncate(time.Second)) {
		f.t.Fatalf("issued at %v; want the rotation's time", at)
	}
	c, valid := f.issuer.Valid(previous)
	switch {
	case grace == 0 && valid:
		f.t.Fatalf("gracePeriod 0s: the previous credential %s is still valid", previous)
	case grace > 0 && (!valid || c.RetireAt.Before(before.Add(grace)) || c.RetireAt.After(time.Now().Add(grace))):
		f.t.Fatalf("previous %s valid %v, retires at %v; want valid until about now + %s", previous, valid, c.RetireAt, grace)
	}
	if evs := f.events(); !slices.ContainsFunc(evs, func(e string) bool {
		return strings.Contains(e, entrycredentials.ReasonEntryCredentialRotated) && strings.Contains(e, id)
	}) {
		f.t.Fatalf("events %v; want %s naming %s", evs, entrycredentials.ReasonEntryCredentialRotated, id)
	}
	return id
}

// entryCredentialRotationStates are TestEntryCredentialStates' rotation rows.
func entryCredentialRotationStates(t *testing.T) {
	ctx := context.Background()
	prefix, _ := objectstore.EntryPrefix(testEntry)
	t.Run("rotation period reached: a new credential published, the previous one retiring for the grace", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		first := f.published()
		issued := f.record().Published.IssuedAt.Format(time.RFC3339)
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, "issued "+issued+", next rotation due ")
		f.mustReconcile() // not yet due
		if f.published() != first || f.issuer.Issuances() != 1 {
			t.Fatalf("before its period: published %q after %d issuances; want %s kept", f.published(), f.issuer.Issuances(), first)
		}
		f.age(time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339))
		before := time.Now()
		f.mustReconcile()
		second := f.wantRotated(first, time.Hour, before)
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, second)
		f.mustReconcile()
		if f.published() != second || f.issuer.Issuances() != 2 || f.issuer.Count() != 2 {
			t.Fatalf("after the rotation: published %q, %d issuances, %d valid; want %s kept, it and the retiring one", f.published(), f.issuer.Issuances(), f.issuer.Count(), second)
		}
	})
	t.Run("rotation on request: honoured once, the annotation removed by the actuator", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile() // no period: on request only
		first := f.published()
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, "rotated on request only")
		f.requestRotation("2026-11-28")
		before := time.Now()
		f.mustReconcile()
		f.wantRotated(first, credentials.DefaultGracePeriod, before)
		if v, ok := f.current().Annotations[entrycredentials.AnnotationRotateCredentials]; ok {
			t.Fatalf("the honoured request %q is still on the entry", v)
		}
		f.mustReconcile()
		if f.issuer.Issuances() != 2 {
			t.Fatalf("%d issuances; want the request honoured once", f.issuer.Issuances())
		}
	})
	t.Run("record without an issue time (previous build): counted from now, not rotated at once", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		first := f.published()
		f.age("")
		before := time.Now()
		f.mustReconcile()
		at := f.record().Published.IssuedAt
		if f.published() != first || f.issuer.Issuances() != 1 || at.Before(before.Truncate(time.Second)) {
			t.Fatalf("published %q after %d issuances, issued at %v; want %s kept, recorded as issued now", f.published(), f.issuer.Issuances(), at, first)
		}
	})
	t.Run("restart mid-rotation, between issue and publish: the unpublished one revoked, one published, one retiring", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		first := f.published()
		f.age(time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339))
		lost, err := f.issuer.IssueEntryCredential(ctx, testBucket, prefix, objectstore.EntryReadWrite, []string{first}) // the pass that never published
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		f.mustReconcile()
		f.wantRotated(first, time.Hour, before)
		if _, ok := f.issuer.Valid(lost.ID); ok || f.issuer.Count() != 2 {
			t.Fatalf("%s (never published) valid %v, %d valid; want it revoked, one published and one retiring", lost.ID, ok, f.issuer.Count())
		}
	})
	t.Run("restart mid-rotation, between publish and retire: the retirement on record, done by the next pass", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		first := f.published()
		f.requestRotation("now")
		f.issuer.RetireErr = errors.New("the store is away")
		if err := f.reconcile(); err == nil || !strings.Contains(err.Error(), first) {
			t.Fatalf("Reconcile = %v; want the failed retirement of %s", err, first)
		}
		second := f.published()
		if c, ok := f.issuer.Valid(first); second == first || !ok || !c.RetireAt.IsZero() || f.record().Retiring == nil || f.record().Retiring.ID != first {
			t.Fatalf("published %q, previous valid %v retiring at %v, record %v; want the new one published and the previous one's retirement on record", second, ok, c.RetireAt, f.etcdBackup().Annotations)
		}
		if _, ok := f.current().Annotations[entrycredentials.AnnotationRotateCredentials]; ok {
			t.Fatal("the request survived its publication: the next pass would rotate again")
		}
		f.issuer.RetireErr = nil
		before := time.Now()
		f.mustReconcile()
		if c, ok := f.issuer.Valid(first); f.published() != second || f.issuer.Issuances() != 2 || !ok || c.RetireAt.Before(before.Add(time.Hour-time.Minute)) || f.record().Retiring != nil {
			t.Fatalf("published %q after %d issuances; previous valid %v until %v; record %v; want %s kept and the previous one retiring", f.published(), f.issuer.Issuances(), ok, c.RetireAt, f.etcdBackup().Annotations, second)
		}
	})
	t.Run("switch off while a rotated-out credential's retirement is pending: both revoked", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		f.requestRotation("now")
		f.issuer.RetireErr = errors.New("the store is away")
		if err := f.reconcile(); err == nil {
			t.Fatal("Reconcile succeeded; want the failed retirement")
		}
		f.issuer.RetireErr = nil
		f.switchTo(false)
		f.mustReconcile()
		if f.published() != "value" || f.issuer.Count() != 0 || f.record().Retiring != nil {
			t.Fatalf("published %q, %d valid, record %v; want the bucket's, none of the entry's, nothing pending", f.published(), f.issuer.Count(), f.etcdBackup().Annotations)
		}
	})
	t.Run("rotation while a previous one is still retiring (IAM's two keys): that one ends early, the rotation goes on", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.issuer.Limit = 2
		f.mustReconcile()
		first := f.published()
		f.requestRotation("one")
		f.mustReconcile()
		second := f.published()
		f.requestRotation("two")
		before := time.Now()
		if err := f.reconcile(); err != nil {
			t.Fatalf("a second rotation within the first one's grace: %v", err)
		}
		f.wantRotated(second, credentials.DefaultGracePeriod, before)
		if _, ok := f.issuer.Valid(first); ok || f.issuer.Count() != 2 {
			t.Fatalf("first valid %v, %d valid; want it revoked early, one published and one retiring", ok, f.issuer.Count())
		}
	})
	t.Run("rotation with gracePeriod 0s: the previous one revoked at once", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(0))
		f.mustReconcile()
		first := f.published()
		f.requestRotation("now")
		before := time.Now()
		f.mustReconcile()
		f.wantRotated(first, 0, before)
		if f.issuer.Count() != 1 {
			t.Fatalf("%d valid; want the published one only", f.issuer.Count())
		}
	})
}

// TestRotationSchedulerAsksForAReconcileWhenDue: the scheduler sets gardener's operation
// annotation on an entry whose credential is due (period or request), and otherwise looks
// again when it will be, never later than entrycredentials.MaxRotationWait.
func TestRotationSchedulerAsksForAReconcileWhenDue(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		issued      time.Duration // ago
		request     bool
		failing     bool
		wantAsk     bool
		wantRequeue time.Duration
	}{
		{name: "fresh credential: look again within the hour", issued: time.Minute, wantRequeue: entrycredentials.MaxRotationWait},
		{name: "due in ten minutes: look again then", issued: 24*time.Hour - 10*time.Minute, wantRequeue: 10 * time.Minute},
		{name: "period reached: ask", issued: 25 * time.Hour, wantAsk: true, wantRequeue: time.Minute},
		{name: "requested: ask", issued: time.Minute, request: true, wantAsk: true, wantRequeue: time.Minute},
		{name: "due on a failing entry: the library's retry rotates, no ask", issued: 25 * time.Hour, failing: true, wantRequeue: 5 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryCredFixture(t, testEntry, true)
			f.configure(rotating(time.Hour))
			f.mustReconcile()
			f.age(time.Now().Add(-c.issued).UTC().Format(time.RFC3339))
			if c.request {
				f.requestRotation("now")
			}
			be := f.current()
			state := gardencorev1beta1.LastOperationStateSucceeded
			if c.failing {
				state = gardencorev1beta1.LastOperationStateError
			}
			be.Status.LastOperation = &gardencorev1beta1.LastOperation{State: state}
			if err := f.client.Status().Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			s := entrycredentials.NewRotationScheduler(entrycredentials.New(f.registered(), f.client, nil, f.recorder), f.client)
			res, err := s.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(be)})
			asked := f.current().Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.GardenerOperationReconcile
			if err != nil || asked != c.wantAsk || res.RequeueAfter > c.wantRequeue || res.RequeueAfter < c.wantRequeue-time.Minute {
				t.Fatalf("Reconcile = %+v, %v; asked %v; want asked %v, requeue about %s", res, err, asked, c.wantAsk, c.wantRequeue)
			}
		})
	}
	// While the provider awaits the seed's configuration the entry's settings are unknown: the
	// scheduler looks again soon (nothing else wakes it when the configuration comes) and asks
	// once it is applied.
	t.Run("seed configuration pending: look again, ask once applied", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.configure(rotating(time.Hour))
		f.mustReconcile()
		f.age(time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339))
		be := f.current()
		be.Status.LastOperation = &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded}
		if err := f.client.Status().Update(ctx, be); err != nil {
			t.Fatal(err)
		}
		seeded, err := provider.WithSeedConfig(f.registered(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		seeded.Await("the seed's Extension")
		s := entrycredentials.NewRotationScheduler(entrycredentials.New(seeded, f.client, nil, f.recorder), f.client)
		res, err := s.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(be)})
		if asked := f.current().Annotations[v1beta1constants.GardenerOperation] != ""; err != nil || asked || res.RequeueAfter != entrycredentials.SeedConfigPendingRetry {
			t.Fatalf("pending: Reconcile = %+v, %v, asked %v; want nothing asked, a look again after %s", res, err, asked, entrycredentials.SeedConfigPendingRetry)
		}
		if err := seeded.Apply(nil, "seed.spec.extensions[0].providerConfig"); err != nil {
			t.Fatal(err)
		}
		res, err = s.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(be)})
		if asked := f.current().Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.GardenerOperationReconcile; err != nil || !asked {
			t.Fatalf("applied: Reconcile = %+v, %v, asked %v; want the due rotation asked", res, err, asked)
		}
	})
	t.Run("off: nothing asked, no look again", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.mustReconcile()
		f.requestRotation("now")
		s := entrycredentials.NewRotationScheduler(entrycredentials.New(f.registered(), f.client, nil, f.recorder), f.client)
		res, err := s.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(f.be)})
		if err != nil || res.RequeueAfter != 0 || f.current().Annotations[v1beta1constants.GardenerOperation] != "" {
			t.Fatalf("Reconcile = %+v, %v, operation %q; want nothing", res, err, f.current().Annotations[v1beta1constants.GardenerOperation])
		}
	})
}

// TestRotationRequestHonouredOnceAcrossARestart: a rotation on request whose pass is cut after
// the secret's record names the new credential (where it clears the intent, before it retires
// the previous one and removes the request). The restarted controller finishes that rotation:
// the previous credential stays valid for the grace, no second credential is issued, and the
// request is removed.
func TestRotationRequestHonouredOnceAcrossARestart(t *testing.T) {
	ctx := context.Background()
	f := newEntryCredFixture(t, testEntry, true)
	f.configure(short())
	f.mustReconcile()
	previous := f.published()
	f.requestRotation("r1")
	// The sixth mutating call of the pass clears the intent (after the issuer's revocation and
	// issuance, the intent, gardener's write and the record): cut there.
	m := &mutations{k: 6, cut: true}
	a := &passes{p: f.registered(), client: m.writer(f.client)}
	a.creds = entrycredentials.New(a.p, f.client, a.client, f.recorder)
	f.issuer.Fault = m.call
	_ = a.Reconcile(ctx, logr.Discard(), f.current())
	f.issuer.Fault = nil
	rotated := f.published()
	if m.calls[5] != "patch *v1alpha1.BackupEntry" || f.record().Published == nil || f.record().Published.ID != rotated || rotated == previous {
		t.Fatalf("calls %v, record %+v, published %s: the cut is not where the record names the rotated credential", m.calls, f.record(), rotated)
	}
	steady(t, f)
	if c, ok := f.issuer.Valid(previous); !ok || c.RetireAt.IsZero() {
		t.Fatalf("the previous credential %s: valid %v, retiring at %v; want it valid and retiring for the grace", previous, ok, c.RetireAt)
	}
	if f.published() != rotated || f.issuer.Issuances() != 2 {
		t.Fatalf("published %s after %d issuances; want %s, the request honoured once", f.published(), f.issuer.Issuances(), rotated)
	}
	if v, ok := f.current().Annotations[entrycredentials.AnnotationRotateCredentials]; ok {
		t.Fatalf("the honoured request %q is still on the entry", v)
	}
}
