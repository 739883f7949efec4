// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// keepingIssuer is a sweepIssuer whose sweep keeps its kept principals only while the sweep
// keeps anything (live entries, read-only or retiring principals): what it keeps are an entry's
// principal whose own revocation failed, and a retiring one.
type keepingIssuer struct{ *sweepIssuer }

func (i keepingIssuer) SweepEntryCredentials(ctx context.Context, bucket string, s objectstore.EntrySweep) (int, error) {
	kept, err := i.sweepIssuer.SweepEntryCredentials(ctx, bucket, s)
	if err == nil && len(s.Live) == 0 && !s.KeepReadOnly && !s.KeepRetiring {
		kept = 0
	}
	return kept, err
}

type keepingIssuing struct {
	namedIssuers

	entry map[string]keepingIssuer
}

func (p keepingIssuing) NewEntryIssuer(_ context.Context, _ provider.Credentials, _ *controllertest.Config, name string) (objectstore.EntryCredentialIssuer, error) {
	i, ok := p.entry[name]
	switch {
	case !ok:
		return nil, objectstore.Invalidf("no entry issuer %q", name)
	case i.sweepIssuer == nil: // the operator's credentials build none of this name now
		return nil, nil
	}
	return i, nil
}

// TestHandBackRevokesEveryEntryPrincipal (issue 44, finding 1): a hand-back alone, with
// entryCredentials still on, waits and says so (before: handed back, every entry's principal
// left valid, the record kept by nobody); with the switch-off in the same change it waits while
// an etcd-backup secret holds an entry's own credential, naming it, then sweeps every principal
// the issuer made for the bucket -- the live entries' (one whose own revocation failed), retiring
// and read-only ones too -- before it releases the entries (before: the switch-off's sweep kept
// the live entries', and the entries were released at once). A store that refuses the sweep
// keeps the hand-back waiting, naming the issuer and the cause, until it does not.
func TestHandBackRevokesEveryEntryPrincipal(t *testing.T) {
	f := newGenFixture(t, true)
	x := keepingIssuer{&sweepIssuer{name: "X", location: "place-of-X", kept: 1, calls: &f.calls}}
	f.actuator = NewActuator(provider.Register(keepingIssuing{namedIssuers: f.provider, entry: map[string]keepingIssuer{"X": x}}), f.client, f.client, f.recorder, options.DeletionOptions{})
	operator := map[string][]byte{"key": []byte("operator")}
	own := map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(genBucket), "key": []byte("entry-own")}
	f.entry("shoot--p--s--1", genBucket, operator)
	f.etcdBackup("shoot--p--s", "etcd-backup", "shoot--p--s--1", own)
	configure := f.withEntryIssuer
	record := func(want string) {
		t.Helper()
		if got := f.bucket().Annotations[AnnotationEntryIssuers]; got != want {
			t.Fatalf("record %q; want %q", got, want)
		}
	}

	configure("X", false)
	f.mustReconcile()
	record(`{"X":["place-of-X"]}`)
	f.events()

	// A hand-back alone: entryCredentials still on.
	configure("X", true)
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionFalse, ReasonHandBackSettings, []string{"remove entryCredentials", "issuer X"}, "Normal "+ReasonHandBackWaiting)
	if len(f.calls) != 0 || !f.held("shoot--p--s--1") {
		t.Fatalf("a hand-back with entryCredentials on swept %q or released the entry (held: %t)", f.calls, f.held("shoot--p--s--1"))
	}

	// Switched off with it: the switch-off's sweep keeps the live entry's; the hand-back waits for
	// the etcd-backup secret that holds the entry's own credential.
	configure("", true)
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackSecrets, []string{"1 secrets", "shoot--p--s/etcd-backup", "issuer X", "place-of-X"}, "Normal "+ReasonHandBackWaiting)
	if want := []string{"X sweep bucket live=[shoot--p--s--1/] ro=true ret=true"}; !slices.Equal(f.calls, want) {
		t.Fatalf("calls %q; want %q", f.calls, want)
	}
	if !f.held("shoot--p--s--1") || !f.nudged("shoot--p--s--1") {
		t.Fatalf("while waiting, the entry is released (held: %t) or not asked for the reconcile that rewrites its etcd-backup (asked: %t)", f.held("shoot--p--s--1"), f.nudged("shoot--p--s--1"))
	}
	record(`{"X":["place-of-X"]}`)

	// The entry's reconcile rewrote etcd-backup with the operator's credentials (its own
	// revocation failed: the switch-off's sweep still keeps its principal); the store refuses the
	// sweep first.
	f.setData("shoot--p--s", "etcd-backup", map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(genBucket), "key": []byte("operator")})
	x.err = objectstore.ErrForbidden
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackPrincipals, []string{"entry issuer X", "store refused"},
		"Warning "+ReasonEntryCredentialsNotSwept, "Warning "+ReasonEntryCredentialsNotSwept, "Normal "+ReasonHandBackWaiting)
	if !f.held("shoot--p--s--1") {
		t.Fatal("a hand-back whose sweep was refused released the entry")
	}
	record(`{"X":["place-of-X"]}`)

	x.err = nil
	f.mustReconcile()
	if want := []string{"X sweep bucket live=[shoot--p--s--1/] ro=true ret=true", "X sweep bucket live=[] ro=false ret=false"}; !slices.Equal(f.calls, want) {
		t.Fatalf("calls %q; want %q", f.calls, want)
	}
	f.expectHandedBack()
	record("")
	if f.held("shoot--p--s--1") {
		t.Error("the entry still carries this extension's finalizer after the hand-back")
	}
	if c := v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionHandBack); !strings.Contains(c.Message, "no credential this extension generated or issued") {
		t.Errorf("condition %s says %q", ConditionHandBack, c.Message)
	}
	// Handed back: nothing left to sweep.
	f.mustReconcile()
	if len(f.calls) != 0 {
		t.Errorf("a reconcile after the hand-back calls %q", f.calls)
	}
}

// TestHandBackWaitsForPrincipalsNoSweepReaches (issue 44, finding 1, the review's open part): a
// hand-back says HandedBack only once every place that an entry issuer issued the bucket's
// entries a principal in -- the bucket's record, and its entries' own records -- was swept or the
// operator said its principals were removed by hand. Before, a sweep that could never run counted
// as done (dropped from the record by the switch-off's sweep in the same pass), the old place of
// credentials that moved was forgotten, and a place only an entry's record named was never looked
// at: each case below said True/HandedBack while principals may have stayed valid.
func TestHandBackWaitsForPrincipalsNoSweepReaches(t *testing.T) {
	operator := map[string][]byte{"key": []byte("operator")}
	setup := func(t *testing.T) (*genFixture, keepingIssuing, func(entry string, handBack bool)) {
		f := newGenFixture(t, true)
		issuing := keepingIssuing{namedIssuers: f.provider, entry: map[string]keepingIssuer{
			"X": {&sweepIssuer{name: "X", location: "place-of-X", kept: 1, calls: &f.calls}}}}
		f.actuator = NewActuator(provider.Register(issuing), f.client, f.client, f.recorder, options.DeletionOptions{})
		f.entry("shoot--p--s--1", genBucket, operator)
		f.etcdBackup("shoot--p--s", "etcd-backup", "shoot--p--s--1", operator) // the secrets moved already
		configure := f.withEntryIssuer
		return f, issuing, configure
	}
	removedByHand := func(f *genFixture, value string) {
		f.t.Helper()
		bb := f.bucket()
		if bb.Annotations == nil {
			bb.Annotations = map[string]string{}
		}
		bb.Annotations[AnnotationEntryPrincipalsRemoved] = value
		if err := f.client.Update(f.ctx, bb); err != nil {
			f.t.Fatal(err)
		}
	}

	t.Run("the operator's credentials moved: the old place is waited for until the operator says it is cleared", func(t *testing.T) {
		f, issuing, configure := setup(t)
		configure("X", false)
		f.mustReconcile()
		issuing.entry["X"].location = "elsewhere"
		f.mustReconcile()
		configure("", true)
		f.events()
		f.calls = nil
		f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackPrincipals,
			[]string{"entry issuer X", "in place-of-X", "now reach elsewhere", AnnotationEntryPrincipalsRemoved, `{"X":["place-of-X"]}`},
			"Warning "+ReasonEntryCredentialsNotSwept, "Warning "+ReasonEntryCredentialsNotSwept, "Normal "+ReasonHandBackWaiting)
		// Where the credentials reach now, everything is swept; the old place is left.
		if want := []string{"X sweep bucket live=[shoot--p--s--1/] ro=true ret=true", "X sweep bucket live=[] ro=false ret=false"}; !slices.Equal(f.calls, want) {
			t.Fatalf("calls %q; want %q", f.calls, want)
		}
		if !f.held("shoot--p--s--1") {
			t.Fatal("the entry is released while principals are left")
		}
		removedByHand(f, `{"X":["place-of-X"]}`)
		f.mustReconcile()
		f.expectHandedBack()
		if got := f.bucket().Annotations[AnnotationEntryIssuers]; got != "" {
			t.Fatalf("record %q after the hand-back; want none", got)
		}
	})
	t.Run("the issuer can no longer be built: waited for, named", func(t *testing.T) {
		f, issuing, configure := setup(t)
		configure("X", false)
		f.mustReconcile()
		issuing.entry["X"] = keepingIssuer{}
		configure("", true)
		f.events()
		f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackPrincipals,
			[]string{"entry issuer X", "in place-of-X", "build no such issuer"},
			"Warning "+ReasonEntryCredentialsNotSwept, "Warning "+ReasonEntryCredentialsNotSwept, "Normal "+ReasonHandBackWaiting)
		f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackPrincipals, []string{"entry issuer X"},
			"Warning "+ReasonEntryCredentialsNotSwept, "Warning "+ReasonEntryCredentialsNotSwept)
		if got := f.bucket().Annotations[AnnotationEntryIssuers]; got != `{"X":["place-of-X"]}` {
			t.Fatalf("record %q; want the place kept", got)
		}
	})
	t.Run("a place only an entry's own record names (the bucket never recorded its issuer): swept", func(t *testing.T) {
		f, _, configure := setup(t)
		s := &corev1.Secret{}
		if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: "shoot--p--s", Name: "etcd-backup"}, s); err != nil {
			t.Fatal(err)
		}
		entryrecord.Write(s.Annotations, entryrecord.Record{Entry: "shoot--p--s--1", Unrevoked: []entryrecord.Credential{{ID: "k1", Issuer: "X", IssuedIn: "place-of-X", Access: objectstore.EntryReadWrite}}})
		if err := f.client.Update(f.ctx, s); err != nil {
			t.Fatal(err)
		}
		configure("", true)
		f.mustReconcile()
		if want := []string{"X sweep bucket live=[shoot--p--s--1/] ro=true ret=true", "X sweep bucket live=[] ro=false ret=false"}; !slices.Equal(f.calls, want) {
			t.Fatalf("calls %q; want the place the entry's record names swept (before: none)", f.calls)
		}
		f.expectHandedBack()
	})
}
