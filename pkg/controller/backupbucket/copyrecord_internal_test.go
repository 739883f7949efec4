// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestNextCopyRecord(t *testing.T) {
	a := CopyLocation{Bucket: "a", CredentialsRef: "c"}
	aElsewhere := CopyLocation{Bucket: "a", Region: "eu-west-1", CredentialsRef: "c"}
	aOtherCreds := CopyLocation{Bucket: "a", CredentialsRef: "d"}
	b := CopyLocation{Bucket: "b", CredentialsRef: "c"}
	aOtherType := CopyLocation{Bucket: "a", CredentialsRef: "c", Type: "mem2"}
	cases := []struct {
		name      string
		ps        ProviderStatus
		declared  *CopyLocation
		converged bool
		want      ProviderStatus
	}{
		{name: "first convergence", declared: &a, converged: true, want: ProviderStatus{Copy: &a}},
		{name: "not converged yet: nothing recorded", declared: &a, want: ProviderStatus{}},
		{name: "same place converged again", ps: ProviderStatus{Copy: &a}, declared: &a, converged: true, want: ProviderStatus{Copy: &a}},
		{name: "same place failing now: still the place converged", ps: ProviderStatus{Copy: &a}, declared: &a, want: ProviderStatus{Copy: &a}},
		{name: "another bucket", ps: ProviderStatus{Copy: &a}, declared: &b, converged: true, want: ProviderStatus{Copy: &b, FormerCopies: []CopyLocation{a}}},
		{name: "another bucket not converged yet", ps: ProviderStatus{Copy: &a}, declared: &b, want: ProviderStatus{FormerCopies: []CopyLocation{a}}},
		{name: "another region", ps: ProviderStatus{Copy: &a}, declared: &aElsewhere, converged: true, want: ProviderStatus{Copy: &aElsewhere, FormerCopies: []CopyLocation{a}}},
		{name: "other credentials", ps: ProviderStatus{Copy: &a}, declared: &aOtherCreds, converged: true, want: ProviderStatus{Copy: &aOtherCreds, FormerCopies: []CopyLocation{a}}},
		{name: "another type only", ps: ProviderStatus{Copy: &a}, declared: &aOtherType, converged: true, want: ProviderStatus{Copy: &aOtherType, FormerCopies: []CopyLocation{a}}},
		{name: "back to the primary's type", ps: ProviderStatus{Copy: &aOtherType, FormerCopies: []CopyLocation{a}}, declared: &a, converged: true, want: ProviderStatus{Copy: &a, FormerCopies: []CopyLocation{aOtherType}}},
		{name: "copy removed", ps: ProviderStatus{Copy: &a}, want: ProviderStatus{FormerCopies: []CopyLocation{a}}},
		{name: "a former copy declared again", ps: ProviderStatus{Copy: &b, FormerCopies: []CopyLocation{a}}, declared: &a, converged: true, want: ProviderStatus{Copy: &a, FormerCopies: []CopyLocation{b}}},
		{name: "recorded once", ps: ProviderStatus{FormerCopies: []CopyLocation{a}, Copy: &a}, want: ProviderStatus{FormerCopies: []CopyLocation{a}}},
		{name: "nothing declared, nothing recorded", want: ProviderStatus{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := nextCopyRecord(tc.ps, tc.declared, tc.converged)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("nextCopyRecord = %+v; want %+v", got, tc.want)
			}
		})
	}
}

func TestReportFormerCopies(t *testing.T) {
	a := CopyLocation{Bucket: "a", CredentialsRef: "c"}
	b := CopyLocation{Bucket: "b", Region: "r", CredentialsRef: "c"}
	cases := []struct {
		name       string
		formers    []CopyLocation
		looks      []formerLook
		declared   *CopyLocation
		keep       []CopyLocation
		status     gardencorev1beta1.ConditionStatus // "": no condition
		reason     string
		saying     []string
		ended      int
		endWarning bool
	}{
		{name: "none"},
		{name: "holds objects", formers: []CopyLocation{a}, looks: []formerLook{{First: []string{"shoot--x/etcd-main/Full-1"}}}, keep: []CopyLocation{a},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonFormerCopyHoldsObjects, saying: []string{`"a"`, `"shoot--x/etcd-main/Full-1"`, "the operator's to delete", "garden/ref-c"}},
		{name: "empty: ends", formers: []CopyLocation{a}, looks: []formerLook{{Empty: true}}, ended: 1},
		{name: "gone: ends", formers: []CopyLocation{a}, looks: []formerLook{{Gone: true}}, ended: 1},
		{name: "credentials gone: ends with a warning", formers: []CopyLocation{a}, looks: []formerLook{{CredentialsGone: true}}, ended: 1, endWarning: true},
		{name: "unreadable: kept, Unknown", formers: []CopyLocation{a}, looks: []formerLook{{Err: errors.New("connection refused")}}, keep: []CopyLocation{a},
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonFormerCopyUnreadable, saying: []string{"connection refused"}},
		{name: "one holds, one unreadable: False names both", formers: []CopyLocation{a, b}, looks: []formerLook{{Err: errors.New("timeout")}, {First: []string{"k"}}}, keep: []CopyLocation{a, b},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonFormerCopyHoldsObjects, saying: []string{`"a"`, `"b" in region "r"`, "timeout", `"k"`}},
		{name: "the declared bucket with other credentials: never called the operator's", formers: []CopyLocation{a}, looks: []formerLook{{}}, declared: &CopyLocation{Bucket: "a", CredentialsRef: "d"}, ended: 1, endWarning: true},
		{name: "the declared bucket's name in a store of another type: another bucket, reported", formers: []CopyLocation{{Bucket: "a", CredentialsRef: "c", Type: "mem2"}}, looks: []formerLook{{First: []string{"k"}}},
			declared: &a, keep: []CopyLocation{{Bucket: "a", CredentialsRef: "c", Type: "mem2"}}, status: gardencorev1beta1.ConditionFalse, reason: ReasonFormerCopyHoldsObjects, saying: []string{`"a" in a store of type mem2`, `"k"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := reportFormerCopies(tc.formers, tc.looks, tc.declared)
			if !reflect.DeepEqual(r.Keep, tc.keep) {
				t.Errorf("keep %v; want %v", r.Keep, tc.keep)
			}
			switch c := r.Condition; {
			case tc.status == "" && c != nil:
				t.Errorf("condition %+v; want none", c)
			case tc.status != "" && (c == nil || c.Status != tc.status || c.Reason != tc.reason):
				t.Errorf("condition %+v; want %s/%s", c, tc.status, tc.reason)
			case c != nil:
				for _, s := range tc.saying {
					if !strings.Contains(c.Message, s) {
						t.Errorf("message %q does not say %q", c.Message, s)
					}
				}
			}
			if len(r.Ended) != tc.ended {
				t.Fatalf("ended %+v; want %d", r.Ended, tc.ended)
			}
			for _, e := range r.Ended {
				if e.Warning != tc.endWarning || !strings.Contains(e.Note, `"a"`) {
					t.Errorf("end %+v; want warning %v naming the bucket", e, tc.endWarning)
				}
			}
		})
	}
}

func TestCopySecretDue(t *testing.T) {
	v := func(s string) *string { return &s }
	ok := gardencorev1beta1.LastOperationStateSucceeded
	cases := []struct {
		name string
		s    copySecretState
		want bool
	}{
		{name: "secret appeared after the reconcile", s: copySecretState{LastOperation: ok, Recorded: v(""), Current: "7"}, want: true},
		{name: "secret changed", s: copySecretState{LastOperation: ok, Recorded: v("7"), Current: "9"}, want: true},
		{name: "secret went", s: copySecretState{LastOperation: ok, Recorded: v("7"), Current: ""}, want: true},
		{name: "the secret the reconcile read", s: copySecretState{LastOperation: ok, Recorded: v("7"), Current: "7"}},
		{name: "still missing", s: copySecretState{LastOperation: ok, Recorded: v(""), Current: ""}},
		{name: "never recorded, secret there: once", s: copySecretState{LastOperation: ok, Current: "7"}, want: true},
		{name: "never recorded, no secret", s: copySecretState{LastOperation: ok}},
		{name: "a reconcile is requested already", s: copySecretState{LastOperation: ok, Annotated: true, Recorded: v(""), Current: "7"}},
		{name: "a reconcile runs: looked at when it ends", s: copySecretState{LastOperation: gardencorev1beta1.LastOperationStateProcessing, Recorded: v(""), Current: "7"}},
		{name: "failed: the library retries", s: copySecretState{LastOperation: gardencorev1beta1.LastOperationStateError, Recorded: v(""), Current: "7"}},
		{name: "never reconciled", s: copySecretState{Current: "7"}},
		{name: "being deleted", s: copySecretState{Deleting: true, LastOperation: ok, Recorded: v(""), Current: "7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := copySecretDue(tc.s); got != tc.want {
				t.Errorf("copySecretDue = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestMergeProviderStatusKeepsOthers: fields another writer put in providerStatus stay; an empty
// status removes it; the same status writes nothing.
func TestMergeProviderStatusKeepsOthers(t *testing.T) {
	bb := &extensionsv1alpha1.BackupBucket{}
	bb.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"apiVersion":"backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketStatus","someoneElses":{"active":"copy"}}`)}
	loc := CopyLocation{Bucket: "a", CredentialsRef: "c"}
	if changed, err := MergeProviderStatus(bb, func(ps *ProviderStatus) { ps.Copy = &loc }); !changed || err != nil {
		t.Fatalf("changed %v, %v; want a change", changed, err)
	}
	raw := string(bb.Status.ProviderStatus.Raw)
	if !strings.Contains(raw, `"someoneElses":{"active":"copy"}`) || !strings.Contains(raw, `"copy":{"bucket":"a","credentialsRef":"c"}`) {
		t.Fatalf("providerStatus %s; want both parts", raw)
	}
	if changed, err := MergeProviderStatus(bb, func(ps *ProviderStatus) { ps.Copy = &loc }); changed || err != nil {
		t.Errorf("the same status: changed %v, %v; want no change", changed, err)
	}
	ps, err := ReadProviderStatus(bb)
	if err != nil || ps.Copy == nil || *ps.Copy != loc {
		t.Fatalf("read back %+v, %v", ps, err)
	}
	empty := &extensionsv1alpha1.BackupBucket{}
	empty.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"copy":{"bucket":"a","credentialsRef":"c"}}`)}
	if changed, err := MergeProviderStatus(empty, func(ps *ProviderStatus) { ps.Copy = nil }); !changed || err != nil || empty.Status.ProviderStatus != nil {
		t.Errorf("providerStatus %v (%v); want none", empty.Status.ProviderStatus, err)
	}
}

// TestMergeProviderStatusUnreadable: a providerStatus whose fields of ours do not decode is an
// error and stays as it is: starting from empty would drop the failover record.
func TestMergeProviderStatusUnreadable(t *testing.T) {
	raw := `{"copy":"not an object","failover":{"at":"2026-11-29T12:00:00Z","copyBucket":"b-copy","reason":"Unreachable","since":null}}`
	bb := &extensionsv1alpha1.BackupBucket{}
	bb.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(raw)}
	loc := CopyLocation{Bucket: "a", CredentialsRef: "c"}
	changed, err := MergeProviderStatus(bb, func(ps *ProviderStatus) { ps.Copy = &loc })
	if err == nil || changed || string(bb.Status.ProviderStatus.Raw) != raw {
		t.Fatalf("changed %v, %v, providerStatus %s; want an error and the status as it was", changed, err, bb.Status.ProviderStatus.Raw)
	}
}

// otherMem is a store of another type than controllertest's "mem".
type otherMem struct{ controllertest.Provider }

func (otherMem) Type() string { return "mem2" }

// TestFormerCopyOfAnotherType: a former copy of another type is listed with the store of its
// type (provider.CopyStore), not the primary's; the declared copy's location records its type
// only when it is not the primary's.
func TestFormerCopyOfAnotherType(t *testing.T) {
	ctx := context.Background()
	primary := controllertest.Bucket(t, "bucket")
	other := controllertest.Bucket(t, "a", "shoot--x/etcd-main/Full-1")
	seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{Store: primary}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seeded.SetCopyStores(provider.Register(otherMem{controllertest.Provider{Store: other}}))
	k8s := controllertest.Client()
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-c"}, Data: map[string][]byte{"key": []byte("c")}}); err != nil {
		t.Fatal(err)
	}
	a := &actuator{provider: seeded, reader: k8s, client: k8s}
	if look := a.lookAtFormer(ctx, CopyLocation{Bucket: "a", CredentialsRef: "c", Type: "mem2"}); look.Err != nil || look.Gone || len(look.First) != 1 {
		t.Errorf("the former copy of type mem2: %+v; want its key listed in the mem2 store", look)
	}
	if look := a.lookAtFormer(ctx, CopyLocation{Bucket: "a", CredentialsRef: "c"}); !look.Gone {
		t.Errorf("a former copy of the primary's type: %+v; want it listed in the primary's store (gone there)", look)
	}
	if look := a.lookAtFormer(ctx, CopyLocation{Bucket: "a", CredentialsRef: "c", Type: "local"}); look.Err == nil {
		t.Errorf("a former copy of a type this binary writes no copy of: %+v; want unreadable", look)
	}
	for _, c := range []struct{ typ, want string }{{"", ""}, {"mem", ""}, {"mem2", "mem2"}} {
		cfg, err := seeded.Decode(controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: c.typ, CredentialsRef: "c", BucketName: "a"}}}).Raw)
		if err != nil {
			t.Fatal(err)
		}
		place, err := connect.CopyPlaceOf(seeded, cfg, "bucket")
		if err != nil {
			t.Fatal(err)
		}
		if l := locationOf(place, seeded.Type()); l.Type != c.want {
			t.Errorf("copy.type %q: location %+v; want type %q", c.typ, l, c.want)
		}
	}
}
