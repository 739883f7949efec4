// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestDecide(t *testing.T) {
	owned := fmt.Errorf("bucket: %w", objectstore.ErrOwnedByOther)
	invalid := objectstore.Invalidf("spec.providerConfig: bad")
	throttled := fmt.Errorf("plan: %w", objectstore.ErrThrottled)
	for _, tc := range []struct {
		name    string
		steps   []rehearsal.Step
		verdict rehearsal.Verdict
		reason  string
	}{
		{"nothing failed", []rehearsal.Step{{What: "a"}, {What: "b", Refusal: true}}, rehearsal.Adoptable, ""},
		{"no steps", nil, rehearsal.Adoptable, ""},
		{"owned by another", []rehearsal.Step{{What: "plan", Err: owned, Refusal: true}}, rehearsal.NotAdoptable, "plan: bucket: "},
		{"invalid config", []rehearsal.Step{{What: "spec.providerConfig", Err: invalid, Refusal: true}}, rehearsal.NotAdoptable, "spec.providerConfig: "},
		{"refusal step, other error", []rehearsal.Step{{What: "plan", Err: throttled, Refusal: true}}, rehearsal.CannotTell, "cannot tell: plan: "},
		{"secret unreadable, even if invalid", []rehearsal.Step{{What: "credentials secret", Err: invalid}}, rehearsal.CannotTell, "cannot tell: credentials secret: "},
		{"secret missing", []rehearsal.Step{{What: "plan", Err: fmt.Errorf("x: %w", &secrets.MissingError{}), Refusal: true}}, rehearsal.CannotTell, "cannot tell: plan: "},
		{"the first failure decides", []rehearsal.Step{{What: "secret", Err: throttled}, {What: "plan", Err: owned, Refusal: true}}, rehearsal.CannotTell, "cannot tell: secret: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict, reason := rehearsal.Decide(tc.steps)
			if verdict != tc.verdict || !strings.HasPrefix(reason, tc.reason) || (tc.reason == "" && reason != "") {
				t.Fatalf("Decide: %s %q; want %s %q...", verdict, reason, tc.verdict, tc.reason)
			}
		})
	}
}

// planning is an in-memory store whose PlanBucket returns changes or err.
type planning struct {
	*memstore.Store

	changes []objectstore.BucketChange
	err     error
}

func (p planning) PlanBucket(context.Context, objectstore.Bucket) ([]objectstore.BucketChange, error) {
	return p.changes, p.err
}

// notPlanning is an in-memory store that cannot plan.
type notPlanning struct{ *memstore.Store }

const bucketName = "seed-bucket"

var someChanges = []objectstore.BucketChange{
	{Setting: "bucket policy statement DenyInsecureTransport", Action: objectstore.ChangeCreate},
	{Setting: "versioning", Action: objectstore.ChangeUpdate, Detail: "Suspended -> Enabled"},
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = extensionsv1alpha1.AddToScheme(s)
	return s
}

func bucket(cfg string) *extensionsv1alpha1.BackupBucket {
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucketName, ResourceVersion: "7"},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, Region: "r", SecretRef: controllertest.SecretRef}}
	if cfg != "" {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(cfg)}
	}
	return bb
}

func entry(name string) *extensionsv1alpha1.BackupEntry {
	return &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "3", CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour))},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, Region: "r", BucketName: bucketName, SecretRef: controllertest.SecretRef}}
}

// operatorSecret is the credentials secret of the bucket and the entries.
func operatorSecret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name},
		Data: map[string][]byte{"key": []byte("s3cr3t-new")}}
}

func TestBucket(t *testing.T) {
	ctx := context.Background()
	mem := controllertest.Bucket(t, bucketName)
	withSecret := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(operatorSecret()).Build()
	withoutSecret := fake.NewClientBuilder().WithScheme(scheme()).Build()
	for _, tc := range []struct {
		name    string
		store   controllertest.Store
		reader  client.Reader
		cfg     string
		verdict rehearsal.Verdict
		reason  string
		changes int
		probe   gardencorev1beta1.ConditionStatus
	}{
		{"planned changes", planning{Store: mem, changes: someChanges}, withSecret, "", rehearsal.Adoptable, "", 2, gardencorev1beta1.ConditionTrue},
		{"converged", planning{Store: mem}, withSecret, "", rehearsal.Adoptable, "", 0, gardencorev1beta1.ConditionTrue},
		{"somebody else's bucket", planning{Store: mem, err: fmt.Errorf("bucket %q: %w", bucketName, objectstore.ErrOwnedByOther)}, withSecret, "", rehearsal.NotAdoptable, "plan of bucket", 0, gardencorev1beta1.ConditionTrue},
		{"plan fails", planning{Store: mem, err: fmt.Errorf("reading the policy: %w", objectstore.ErrThrottled)}, withSecret, "", rehearsal.CannotTell, "cannot tell: plan of bucket", 0, gardencorev1beta1.ConditionTrue},
		{"provider cannot plan", notPlanning{mem}, withSecret, "", rehearsal.CannotTell, "cannot tell: plan: ", 0, gardencorev1beta1.ConditionTrue},
		{"secret missing", planning{Store: mem, changes: someChanges}, withoutSecret, "", rehearsal.CannotTell, "cannot tell: credentials secret", 0, gardencorev1beta1.ConditionFalse},
		{"providerConfig does not decode", planning{Store: mem, changes: someChanges}, withSecret, "{", rehearsal.NotAdoptable, "spec.providerConfig", 0, gardencorev1beta1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := provider.Register(controllertest.Provider{Store: tc.store})
			r := rehearsal.Bucket(ctx, p, tc.reader, bucket(tc.cfg))
			if r.Verdict != tc.verdict || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Fatalf("verdict %s %q; want %s %q...", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
			if len(r.Changes) != tc.changes {
				t.Fatalf("changes %v; want %d", r.Changes, tc.changes)
			}
			if len(r.Checks) != 1 || r.Checks[0].Name != rehearsal.CheckProbe || r.Checks[0].Status != tc.probe {
				t.Fatalf("checks %+v; want the probe %s", r.Checks, tc.probe)
			}
		})
	}
}

func TestEntry(t *testing.T) {
	ctx := context.Background()
	mem := controllertest.Bucket(t, bucketName, "shoot--p--a/v1/Full-00000000-00000001-1700000000")
	p := provider.Register(controllertest.Provider{Store: planning{Store: mem}})
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--a", Name: "etcd-backup"},
		Data: map[string][]byte{"key": []byte("s3cr3t-old"), "bucketName": []byte(bucketName), "incumbentOnly": []byte("x")}}
	reader := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(operatorSecret(), etcdBackup).Build()
	adoptable := &rehearsal.Report{Kind: rehearsal.KindBackupBucket, Name: bucketName, Verdict: rehearsal.Adoptable}

	r := rehearsal.Entry(ctx, p, reader, entryinventory.DefaultOptions(), entry("shoot--p--a--1"), adoptable, time.Now())
	if r.Verdict != rehearsal.Adoptable {
		t.Fatalf("verdict %s %q; want Adoptable", r.Verdict, r.Reason)
	}
	var got []string
	for _, c := range r.Changes {
		got = append(got, string(c.Action)+" "+c.Setting)
	}
	want := []string{"create finalizer backup.extensions.gardener.cloud/objects", "update etcd-backup secret key key", "delete etcd-backup secret key incumbentOnly"}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %v; want %v", got, want)
	}
	if s, _ := json.Marshal(r); strings.Contains(string(s), "s3cr3t") {
		t.Fatalf("the report holds a secret's value: %s", s)
	}
	if len(r.Checks) != 2 || r.Checks[0].Status != gardencorev1beta1.ConditionTrue || r.Checks[1].Name != rehearsal.CheckBackupsFresh {
		t.Fatalf("checks %+v; want the probe True and BackupsFresh", r.Checks)
	}

	notAdoptable := &rehearsal.Report{Kind: rehearsal.KindBackupBucket, Name: bucketName, Verdict: rehearsal.NotAdoptable, Reason: "plan: owned by another"}
	if r := rehearsal.Entry(ctx, p, reader, entryinventory.DefaultOptions(), entry("shoot--p--a--1"), notAdoptable, time.Now()); r.Verdict != rehearsal.NotAdoptable || len(r.Changes) != 0 {
		t.Fatalf("entry of a bucket not adoptable: %s %q %v; want NotAdoptable without changes", r.Verdict, r.Reason, r.Changes)
	}
	cannotTell := &rehearsal.Report{Kind: rehearsal.KindBackupBucket, Name: bucketName, Verdict: rehearsal.CannotTell, Reason: "cannot tell: x"}
	if r := rehearsal.Entry(ctx, p, reader, entryinventory.DefaultOptions(), entry("shoot--p--a--1"), cannotTell, time.Now()); r.Verdict != rehearsal.CannotTell {
		t.Fatalf("entry of a bucket that cannot be told: %s %q; want CannotTell", r.Verdict, r.Reason)
	}
	noSecret := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(etcdBackup).Build()
	if r := rehearsal.Entry(ctx, p, noSecret, entryinventory.DefaultOptions(), entry("shoot--p--a--1"), adoptable, time.Now()); r.Verdict != rehearsal.CannotTell || !strings.Contains(r.Reason, "cannot tell: plan") {
		t.Fatalf("entry whose secret is missing: %s %q; want CannotTell", r.Verdict, r.Reason)
	}
	if r := rehearsal.Entry(ctx, p, reader, entryinventory.DefaultOptions(), entry("shoot--p--a--1/../x"), adoptable, time.Now()); r.Verdict != rehearsal.NotAdoptable {
		t.Fatalf("entry whose name makes no prefix: %s %q; want NotAdoptable", r.Verdict, r.Reason)
	}
}

func TestSummary(t *testing.T) {
	reports := []rehearsal.Report{
		{Kind: rehearsal.KindBackupBucket, Name: "b", Verdict: rehearsal.Adoptable, Changes: someChanges},
		{Kind: rehearsal.KindBackupEntry, Name: "e1", Verdict: rehearsal.Adoptable, Checks: []rehearsal.Check{{Status: gardencorev1beta1.ConditionFalse}}},
		{Kind: rehearsal.KindBackupEntry, Name: "e2", Verdict: rehearsal.CannotTell, Reason: "cannot tell: secret"},
	}
	status, reason, msg := rehearsal.Summary(reports)
	if status != gardencorev1beta1.ConditionUnknown || reason != rehearsal.ReasonCannotTell {
		t.Fatalf("%s %s; want Unknown CannotTell", status, reason)
	}
	for _, want := range []string{"1 of 1 BackupBuckets and 1 of 2 BackupEntries", "2 changes", "1 read-only checks did not pass", "BackupEntry e2: cannot tell: secret"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	reports = append(reports, rehearsal.Report{Kind: rehearsal.KindBackupBucket, Name: "x", Verdict: rehearsal.NotAdoptable, Reason: "owned"})
	if status, reason, _ := rehearsal.Summary(reports); status != gardencorev1beta1.ConditionFalse || reason != rehearsal.ReasonNotAdoptable {
		t.Fatalf("%s %s; want False NotAdoptable", status, reason)
	}
	if status, reason, _ := rehearsal.Summary(reports[:1]); status != gardencorev1beta1.ConditionTrue || reason != rehearsal.ReasonAllAdoptable {
		t.Fatalf("%s %s; want True AllAdoptable", status, reason)
	}
}

// seed is a fake API server with a bucket, two entries, their secrets and the seed's Extension.
func seed(t *testing.T, funcs interceptor.Funcs) client.Client {
	t.Helper()
	ext := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-mem"},
		Spec:   extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "backup-mem"}},
		Status: extensionsv1alpha1.ExtensionStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{Conditions: []gardencorev1beta1.Condition{{Type: "Other", Status: gardencorev1beta1.ConditionTrue}}}}}
	a, b := entry("shoot--p--a--1"), entry("shoot--p--b--1")
	b.Spec.SecretRef = corev1.SecretReference{Namespace: "garden", Name: "missing"}
	other := entry("shoot--p--c--1")
	other.Spec.Type = "aws"
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--a", Name: "etcd-backup"}, Data: map[string][]byte{"key": []byte("value")}}
	return fake.NewClientBuilder().WithScheme(scheme()).WithStatusSubresource(&extensionsv1alpha1.Extension{}, &extensionsv1alpha1.BackupBucket{}, &extensionsv1alpha1.BackupEntry{}).
		WithObjects(operatorSecret(), etcdBackup, bucket(""), a, b, other, ext).WithInterceptorFuncs(funcs).Build()
}

// theirs is every object of the seed the rehearsal must not write, as read.
func theirs(t *testing.T, c client.Client) []client.Object {
	t.Helper()
	ctx := context.Background()
	var out []client.Object
	for _, list := range []client.ObjectList{&extensionsv1alpha1.BackupBucketList{}, &extensionsv1alpha1.BackupEntryList{}, &corev1.SecretList{}} {
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		out = append(out, items(list)...)
	}
	return out
}

// items are list's objects.
func items(list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *extensionsv1alpha1.BackupBucketList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *extensionsv1alpha1.BackupEntryList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.SecretList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

func rehearser(c client.Client, store controllertest.Store) *rehearsal.Rehearser {
	return &rehearsal.Rehearser{
		Provider: provider.Register(controllertest.Provider{Store: store}),
		Reader:   c, Client: c, Log: logr.Discard(),
		Options: rehearsal.Options{Interval: time.Hour, Namespace: "extension-backup-mem-rehearsal", Name: "gardener-extension-backup-mem-rehearsal", Inventory: entryinventory.DefaultOptions()},
	}
}

// TestOnceWritesOnlyItsOwn: a rehearsal writes its ConfigMap, its condition on the seed's
// Extension (keeping the others') and its metrics, and no BackupBucket, BackupEntry or secret;
// an entry whose secret is missing is reported as not told, never as adoptable.
func TestOnceWritesOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	var writes []string
	c := seed(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes = append(writes, fmt.Sprintf("create %T %s", obj, obj.GetName()))
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes = append(writes, fmt.Sprintf("update %T %s", obj, obj.GetName()))
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes = append(writes, fmt.Sprintf("patch %T %s", obj, obj.GetName()))
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes = append(writes, fmt.Sprintf("patch %T %s/%s", obj, obj.GetName(), sub))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	before := theirs(t, c)
	mem := controllertest.Bucket(t, bucketName)
	r := rehearser(c, planning{Store: mem, changes: someChanges})
	for range 2 { // the second updates the ConfigMap
		if err := r.Once(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := theirs(t, c); !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatalf("the rehearsal changed objects that are not its own")
	}
	want := []string{
		"create *v1.ConfigMap gardener-extension-backup-mem-rehearsal", "patch *v1alpha1.Extension backup-mem/status",
		"update *v1.ConfigMap gardener-extension-backup-mem-rehearsal", "patch *v1alpha1.Extension backup-mem/status",
	}
	if !slices.Equal(writes, want) {
		t.Fatalf("writes %v; want only its own %v", writes, want)
	}

	ex := &extensionsv1alpha1.Extension{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "garden", Name: "backup-mem"}, ex); err != nil {
		t.Fatal(err)
	}
	cond := v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != rehearsal.ReasonCannotTell ||
		!strings.Contains(cond.Message, "1 of 1 BackupBuckets and 1 of 2 BackupEntries") || !strings.Contains(cond.Message, "BackupEntry shoot--p--b--1: cannot tell") {
		t.Fatalf("condition %+v; want Unknown/CannotTell naming the entry whose secret is missing", cond)
	}
	if v1beta1helper.GetCondition(ex.Status.Conditions, "Other") == nil {
		t.Fatal("the Extension's other condition is gone")
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name}, cm); err != nil {
		t.Fatal(err)
	}
	var published rehearsal.Published
	if err := json.Unmarshal([]byte(cm.Data[rehearsal.ConfigMapKey]), &published); err != nil {
		t.Fatal(err)
	}
	if len(published.Reports) != 3 || len(published.Reports[0].Changes) != 2 || published.Summary == "" {
		t.Fatalf("published %+v; want the bucket with its 2 changes and both entries", published)
	}
	if got := testutil.ToFloat64(metrics.RehearsalAdoptable.WithLabelValues(rehearsal.KindBackupBucket, bucketName)); got != 1 {
		t.Fatalf("adoptable gauge of the bucket %v; want 1", got)
	}
	if got := testutil.ToFloat64(metrics.RehearsalCannotTell.WithLabelValues(rehearsal.KindBackupEntry, "shoot--p--b--1")); got != 1 {
		t.Fatalf("cannot-tell gauge of entry b %v; want 1", got)
	}
	if got := testutil.ToFloat64(metrics.RehearsalPlannedChanges.WithLabelValues(rehearsal.KindBackupBucket, bucketName, "create")); got != 1 {
		t.Fatalf("planned creations of the bucket %v; want 1", got)
	}
	if n := testutil.CollectAndCount(metrics.RehearsalAdoptable); n != 2 {
		t.Fatalf("%d adoptable series; want 2 (the bucket and entry a; entry b cannot be told, entry c is aws's)", n)
	}
}

// TestOnceWhenNothingCanBeListed: the condition says nothing was rehearsed and the metrics of
// an earlier rehearsal are gone.
func TestOnceWhenNothingCanBeListed(t *testing.T) {
	ctx := context.Background()
	metrics.RecordRehearsal([]metrics.RehearsedObject{{Kind: rehearsal.KindBackupBucket, Name: "earlier", Changes: map[string]int{"create": 1}}}, 0)
	c := seed(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*extensionsv1alpha1.BackupEntryList); ok {
			return errors.New("the API server is away")
		}
		return c.List(ctx, list, opts...)
	}})
	r := rehearser(c, planning{Store: controllertest.Bucket(t, bucketName)})
	if err := r.Once(ctx); err == nil || !strings.Contains(err.Error(), "the API server is away") {
		t.Fatalf("Once: %v; want the listing's error", err)
	}
	ex := &extensionsv1alpha1.Extension{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "garden", Name: "backup-mem"}, ex); err != nil {
		t.Fatal(err)
	}
	if cond := v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal); cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != rehearsal.ReasonFailed {
		t.Fatalf("condition %+v; want Unknown/%s", cond, rehearsal.ReasonFailed)
	}
	if n := testutil.CollectAndCount(metrics.RehearsalPlannedChanges); n != 0 {
		t.Fatalf("%d planned-changes series left from an earlier rehearsal; want none", n)
	}
}
