// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// sweepIssuer is an entry issuer that logs its sweeps ("X sweep live=[..] ro=.. ret=..") and
// answers them with kept and err; the rest of the seam is not used by the bucket's controller.
type sweepIssuer struct {
	objectstore.EntryCredentialIssuer // nil: any other call panics

	name, location string
	kept           int
	err            error
	calls          *[]string
}

func (i *sweepIssuer) Location(context.Context) (string, error) { return i.location, nil }

func (i *sweepIssuer) SweepEntryCredentials(_ context.Context, bucket string, s objectstore.EntrySweep) (int, error) {
	var live []string
	for _, p := range s.Live {
		live = append(live, p.String())
	}
	*i.calls = append(*i.calls, fmt.Sprintf("%s sweep %s live=%v ro=%t ret=%t", i.name, bucket, live, s.KeepReadOnly, s.KeepRetiring))
	return i.kept, i.err
}

// entryIssuing is the generated credentials' fixture provider with entry issuers by name: a name
// not in entry is ERR_CONFIGURATION_PROBLEM, one mapped to nil builds no issuer.
type entryIssuing struct {
	namedIssuers

	entry map[string]*sweepIssuer
}

func (p entryIssuing) NewEntryIssuer(_ context.Context, _ provider.Credentials, _ *controllertest.Config, name string) (objectstore.EntryCredentialIssuer, error) {
	i, ok := p.entry[name]
	switch {
	case !ok:
		return nil, objectstore.Invalidf("no entry issuer %q", name)
	case i == nil:
		return nil, nil
	}
	return i, nil
}

type sweepFixture struct {
	*genFixture

	entry map[string]*sweepIssuer
}

// newSweepFixture is the bucket with entry issuers X and Y, and on the seed three entries: two
// that name the bucket (one a source- entry) and one of another bucket.
func newSweepFixture(t *testing.T) *sweepFixture {
	f := &sweepFixture{genFixture: newGenFixture(t, true), entry: map[string]*sweepIssuer{}}
	for _, name := range []string{"X", "Y"} {
		f.entry[name] = &sweepIssuer{name: name, location: "place-of-" + name, calls: &f.calls}
	}
	f.restart()
	for name, bucket := range map[string]string{"shoot--p--a": genBucket, "source-shoot--p--b": genBucket, "shoot--p--c": "other"} {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket}}
		if err := f.client.Create(f.ctx, be); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// restart builds the actuator over the provider with the entry issuers.
func (f *sweepFixture) restart() {
	f.actuator = NewActuator(provider.Register(entryIssuing{namedIssuers: f.provider, entry: f.entry}), f.client, f.client, f.recorder, options.DeletionOptions{})
}

// switchTo sets entryCredentials.issuer in the bucket's providerConfig ("": off).
func (f *sweepFixture) switchTo(issuer string) {
	f.t.Helper()
	bb := f.bucket()
	cfg := controllertest.Config{}
	if issuer != "" {
		cfg.Entry = &credentials.EntrySettings{Issuer: issuer}
	}
	bb.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

func (f *sweepFixture) expectCalls(want ...string) {
	f.t.Helper()
	if !slices.Equal(f.calls, want) {
		f.t.Fatalf("calls %q; want %q", f.calls, want)
	}
}

func (f *sweepFixture) expectRecord(want string) {
	f.t.Helper()
	if got := f.bucket().Annotations[AnnotationEntryIssuers]; got != want {
		f.t.Fatalf("record %q; want %q", got, want)
	}
}

// removedByHand sets the operator's AnnotationEntryPrincipalsRemoved on the bucket.
func (f *sweepFixture) removedByHand(value string) {
	f.t.Helper()
	bb := f.bucket()
	metav1.SetMetaDataAnnotation(&bb.ObjectMeta, AnnotationEntryPrincipalsRemoved, value)
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

// notSwept returns the EntryCredentialsNotSwept warnings since the last call.
func (f *sweepFixture) notSwept() []string {
	var out []string
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning "+ReasonEntryCredentialsNotSwept+" ") {
			out = append(out, e)
		}
	}
	return out
}

// deleteEntriesAndBucket deletes the seed's entries (gardener deletes them before their bucket)
// and runs the bucket's deletion.
func (f *sweepFixture) deleteEntriesAndBucket() error {
	f.t.Helper()
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := f.client.List(f.ctx, list); err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if err := f.client.Delete(f.ctx, &list.Items[i]); err != nil {
			f.t.Fatal(err)
		}
	}
	f.calls = nil
	return f.actuator.Delete(f.ctx, logr.Discard(), f.bucket())
}

const (
	liveOfBucket = "live=[shoot--p--a/ shoot--p--b/]"
	orphans      = "ro=true ret=true"
	everything   = "live=[] ro=false ret=false"
)

// TestEntryCredentialSweepsOfTheBucket: which entry issuers the BackupBucket controller sweeps
// with, when, with which live set, and what it does when the store refuses.
func TestEntryCredentialSweepsOfTheBucket(t *testing.T) {
	t.Run("on: the issuer is recorded with its place, nothing is swept", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.expectCalls()
		f.expectRecord(`{"X":["place-of-X"]}`)
	})
	t.Run("switched off: the orphans swept, live entries' kept; the record goes once none is left", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("")
		f.entry["X"].kept = 2 // the live entries' principals, revoked when they reconcile
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
		f.expectRecord(`{"X":["place-of-X"]}`)
		f.entry["X"].kept = 0
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
		f.expectRecord("")
		f.mustReconcile()
		f.expectCalls()
	})
	t.Run("issuer changed: the old one sweeps its orphans, the new one is recorded", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("Y")
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
		f.expectRecord(`{"Y":["place-of-Y"]}`)
	})
	t.Run("switched off, the store refuses: reported, reconcile succeeds, tried again", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("")
		f.entry["X"].err = fmt.Errorf("listing IAM users: %w", objectstore.ErrForbidden)
		f.events()
		f.mustReconcile()
		if got := f.notSwept(); len(got) != 1 || !strings.Contains(got[0], "listing IAM users") {
			t.Fatalf("events %q; want one EntryCredentialsNotSwept with the cause", got)
		}
		f.expectRecord(`{"X":["place-of-X"]}`)
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
	})
	t.Run("switched off, credentials now reach another place: reported on each look, kept on record until the operator says they were removed by hand", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("")
		f.entry["X"].location = "elsewhere"
		f.events()
		for range 2 {
			f.mustReconcile()
			f.expectCalls()
			if got := f.notSwept(); len(got) != 1 || !strings.Contains(got[0], "place-of-X") || !strings.Contains(got[0], "elsewhere") || !strings.Contains(got[0], AnnotationEntryPrincipalsRemoved) {
				t.Fatalf("events %q; want one EntryCredentialsNotSwept naming both places and how to say they were removed", got)
			}
			// Before: dropped from the record, and a later hand-back said nothing was left.
			f.expectRecord(`{"X":["place-of-X"]}`)
		}
		f.removedByHand(`{"X":["place-of-X"]}`)
		f.mustReconcile()
		f.expectRecord("")
		if got := f.notSwept(); len(got) != 0 {
			t.Fatalf("events %q after the operator's word; want none", got)
		}
	})
	t.Run("credentials moved while on: the new place recorded beside the old, the move reported; a switch-off sweeps the new place and keeps the old on record", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.entry["X"].location = "elsewhere"
		f.events()
		f.mustReconcile()
		f.expectRecord(`{"X":["elsewhere","place-of-X"]}`)
		if got := f.notSwept(); len(got) != 1 || !strings.Contains(got[0], "place-of-X") || !strings.Contains(got[0], "now reach elsewhere") {
			t.Fatalf("events %q; want one EntryCredentialsNotSwept naming the old place and the new", got)
		}
		f.mustReconcile()
		if got := f.notSwept(); len(got) != 0 {
			t.Fatalf("events %q on an unchanged place; want none", got)
		}
		f.switchTo("")
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
		f.expectRecord(`{"X":["place-of-X"]}`)
		if got := f.notSwept(); len(got) != 1 || !strings.Contains(got[0], "in place-of-X") {
			t.Fatalf("the switch-off reported %q; want the old place named as not swept", got)
		}
	})
	t.Run("settings that never converge: the configured issuer is still recorded", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		faults := memstore.WithFaults(f.mem)
		f.provider.Store = faults
		f.restart()
		faults.Fail(memstore.OpEnsureBucket, errors.New("policy refused"))
		if err := f.reconcile(); err == nil {
			t.Fatal("Reconcile succeeded; want EnsureBucket's error")
		}
		// Before: recorded only once the bucket converged, so a bucket whose settings never did
		// left its entries' principals to no sweep and no hand-back.
		f.expectRecord(`{"X":["place-of-X"]}`)
		f.expectCalls()
	})
	t.Run("an earlier build's record (one place per issuer) is read", func(t *testing.T) {
		f := newSweepFixture(t)
		bb := f.bucket()
		metav1.SetMetaDataAnnotation(&bb.ObjectMeta, AnnotationEntryIssuers, `{"X":"place-of-X"}`)
		if err := f.client.Update(f.ctx, bb); err != nil {
			t.Fatal(err)
		}
		f.entry["X"].kept = 1
		f.mustReconcile()
		f.expectCalls("X sweep bucket " + liveOfBucket + " " + orphans)
		f.expectRecord(`{"X":["place-of-X"]}`)
	})
	t.Run("issuer changed, the old one's sweep fails: the error returned, the new one recorded", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("Y")
		f.entry["X"].err = errors.New("connection reset")
		if err := f.reconcile(); err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("Reconcile = %v; want the sweep's error", err)
		}
		f.expectRecord(`{"X":["place-of-X"],"Y":["place-of-Y"]}`)
	})
	t.Run("a record that is not one: ERR_CONFIGURATION_PROBLEM naming the annotation", func(t *testing.T) {
		f := newSweepFixture(t)
		bb := f.bucket()
		metav1.SetMetaDataAnnotation(&bb.ObjectMeta, AnnotationEntryIssuers, "MinIO")
		if err := f.client.Update(f.ctx, bb); err != nil {
			t.Fatal(err)
		}
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !strings.Contains(err.Error(), AnnotationEntryIssuers) {
			t.Fatalf("error %v does not name the annotation", err)
		}
	})
	t.Run("deleted: everything swept with the configured and the recorded issuers", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.mustReconcile()
		f.switchTo("Y")
		f.entry["X"].kept = 1 // a live entry's: the record of X stays
		f.mustReconcile()
		f.expectRecord(`{"X":["place-of-X"],"Y":["place-of-Y"]}`)
		f.entry["X"].kept = 0 // the entries are gone: the deletion's sweep keeps nothing
		if err := f.deleteEntriesAndBucket(); err != nil {
			t.Fatal(err)
		}
		f.expectCalls("X sweep bucket "+everything, "Y sweep bucket "+everything)
		if err := f.mem.Probe(f.ctx, genBucket); err == nil {
			t.Fatal("the bucket is still there")
		}
	})
	t.Run("deleted, the store refuses: reported, the deletion waits (the record stays) until the operator says they were removed by hand", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.entry["X"].err = fmt.Errorf("deleting IAM user u: %w", objectstore.ErrForbidden)
		f.events()
		err := f.deleteEntriesAndBucket()
		// Before: the deletion went on and the principals were on no record any more.
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), AnnotationEntryPrincipalsRemoved) {
			t.Fatalf("Delete = %v; want the refusal named, and how to say they were removed by hand", err)
		}
		if got := f.notSwept(); len(got) != 1 || !strings.Contains(got[0], "removed by hand") {
			t.Fatalf("events %q; want one EntryCredentialsNotSwept", got)
		}
		if err := f.mem.Probe(f.ctx, genBucket); err != nil {
			t.Fatalf("the bucket is gone before its principals: %v", err)
		}
		f.removedByHand(`{"X":[""]}`)
		if err := f.deleteEntriesAndBucket(); err != nil {
			t.Fatalf("Delete = %v after the operator's word; want the deletion to go on", err)
		}
		f.expectCalls()
		if err := f.mem.Probe(f.ctx, genBucket); err == nil {
			t.Fatal("the bucket is still there")
		}
	})
	// Issue 44, review of the deletion's sweep: the configured issuer on no record, which the
	// configuration cannot build (issuer minio against an endpoint that is not MinIO), issued
	// nothing; the deletion waited for the operator's word on principals that never existed.
	for name, issuer := range map[string]string{"cannot be built (ERR_CONFIGURATION_PROBLEM)": "Z", "builds no such issuer": "N"} {
		t.Run("deleted, the configured issuer on no record "+name+": nothing to sweep, the deletion goes on", func(t *testing.T) {
			f := newSweepFixture(t)
			f.entry["N"] = nil
			f.switchTo(issuer)
			f.mustReconcile()
			f.expectRecord("")
			f.events()
			if err := f.deleteEntriesAndBucket(); err != nil {
				t.Fatalf("Delete = %v; want the deletion to go on", err)
			}
			f.expectCalls()
			if got := f.notSwept(); len(got) != 0 {
				t.Fatalf("events %q; want none (nothing was issued)", got)
			}
			if err := f.mem.Probe(f.ctx, genBucket); err == nil {
				t.Fatal("the bucket is still there")
			}
		})
	}
	t.Run("deleted, the configured issuer recorded at a place but built no more: reported, the deletion waits", func(t *testing.T) {
		f := newSweepFixture(t)
		bb := f.bucket()
		metav1.SetMetaDataAnnotation(&bb.ObjectMeta, AnnotationEntryIssuers, `{"Z":["place-of-Z"]}`)
		if err := f.client.Update(f.ctx, bb); err != nil {
			t.Fatal(err)
		}
		f.switchTo("Z")
		f.events()
		err := f.deleteEntriesAndBucket()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !strings.Contains(err.Error(), "place-of-Z") || !strings.Contains(err.Error(), AnnotationEntryPrincipalsRemoved) {
			t.Fatalf("Delete = %v; want the place named, and how to say they were removed by hand", err)
		}
		if got := f.notSwept(); len(got) != 1 {
			t.Fatalf("events %q; want one EntryCredentialsNotSwept", got)
		}
		if err := f.mem.Probe(f.ctx, genBucket); err != nil {
			t.Fatalf("the bucket is gone before its principals: %v", err)
		}
	})
	t.Run("deleted, the configured issuer on no record, built, its sweep refused: the deletion waits", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.entry["X"].err = fmt.Errorf("listing users: %w", objectstore.ErrUnsupported)
		err := f.deleteEntriesAndBucket()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		f.expectCalls("X sweep bucket " + everything)
		if err := f.mem.Probe(f.ctx, genBucket); err != nil {
			t.Fatalf("the bucket is gone before its principals: %v", err)
		}
	})
	t.Run("deleted, a transient error: the deletion fails and is retried", func(t *testing.T) {
		f := newSweepFixture(t)
		f.switchTo("X")
		f.entry["X"].err = errors.New("connection reset")
		err := f.deleteEntriesAndBucket()
		if err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("Delete = %v; want the sweep's error", err)
		}
		if err := f.mem.Probe(f.ctx, genBucket); err != nil {
			t.Fatalf("the bucket is gone before its principals: %v", err)
		}
		f.entry["X"].err = nil
		if err := f.deleteEntriesAndBucket(); err != nil {
			t.Fatal(err)
		}
		f.expectCalls("X sweep bucket " + everything)
	})
}
