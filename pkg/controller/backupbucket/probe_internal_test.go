// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// revocable serves the in-memory store to every secret whose "key" is not revoked; a revoked one
// gets a store that refuses every read, as a cloud refuses a revoked key.
type revocable struct {
	controllertest.Provider

	revoked map[string]bool
}

func (p revocable) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	if p.revoked[string(creds.Data["key"])] {
		return refused{p.Store}, nil
	}
	return p.Store, nil
}

type refused struct{ objectstore.DataPlane }

func (refused) Probe(context.Context, string) error {
	return fmt.Errorf("the key is revoked: %w", objectstore.ErrUnauthenticated)
}

const interval = 5 * time.Minute

type probeFixture struct {
	t        *testing.T
	mem      *memstore.Store
	client   client.Client
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
	prober   *prober
	revoked  map[string]bool
}

func newProbeFixture(t *testing.T, lastOperation gardencorev1beta1.LastOperationState) *probeFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme) // connect.ServeOf reads the shoot's Etcd
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: "probed"},
		Spec:       extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupBucketStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: lastOperation},
			// Another writer's condition that the probe must keep.
			Conditions: []gardencorev1beta1.Condition{{Type: ConditionGeneratedCredentials, Status: gardencorev1beta1.ConditionTrue, Reason: "Published"}},
		}},
	}
	operator := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("operator")}}
	generatedSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "generated-bucket-probed"}, Data: map[string][]byte{"key": []byte("generated")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(bb, operator, generatedSecret).WithStatusSubresource(bb).Build()
	mem := controllertest.Bucket(t, "probed")
	f := &probeFixture{t: t, mem: mem, client: c, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)), recorder: events.NewFakeRecorder(20), revoked: map[string]bool{}}
	f.prober = &prober{Deps: periodic.Deps{Provider: provider.Register(revocable{controllertest.Provider{Store: mem}, f.revoked}), Reader: c, Client: c, Recorder: f.recorder,
		Clock: f.clock}, opts: ProbeOptions{Interval: interval}}
	metrics.ForgetBucket("probed")
	return f
}

// probe runs one reconcile and returns the condition and the requeue.
func (f *probeFixture) probe() (*gardencorev1beta1.Condition, time.Duration) {
	f.t.Helper()
	res, err := f.prober.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "probed"}})
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	bb := f.bucket()
	if v1beta1helper.GetCondition(bb.Status.Conditions, ConditionGeneratedCredentials) == nil {
		f.t.Fatalf("the probe dropped another writer's condition: %+v", bb.Status.Conditions)
	}
	return v1beta1helper.GetCondition(bb.Status.Conditions, ConditionBucketAvailable), res.RequeueAfter
}

func (f *probeFixture) bucket() *extensionsv1alpha1.BackupBucket {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: "probed"}, bb); err != nil {
		f.t.Fatal(err)
	}
	return bb
}

// createCopySecret creates the copy's credentials, the secret ref-backup-copy in the garden
// namespace of copy.credentialsRef backup-copy.
func (f *probeFixture) createCopySecret() {
	f.t.Helper()
	if err := f.client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("copy")}}); err != nil {
		f.t.Fatal(err)
	}
}

// createCopyBucket creates the copy bucket probed-copy in the fixture's store.
func (f *probeFixture) createCopyBucket() {
	f.t.Helper()
	if err := f.mem.EnsureBucket(context.Background(), objectstore.Bucket{Name: "probed-copy"}); err != nil {
		f.t.Fatal(err)
	}
}

// configure sets the probed bucket's providerConfig to cfg.
func (f *probeFixture) configure(cfg controllertest.Config) {
	f.t.Helper()
	bb := f.bucket()
	bb.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(context.Background(), bb); err != nil {
		f.t.Fatal(err)
	}
}

func (f *probeFixture) events() []string {
	var got []string
	for {
		select {
		case e := <-f.recorder.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func available(credentials string) float64 {
	return testutil.ToFloat64(metrics.BucketAvailable.WithLabelValues("probed", credentials))
}

func TestProbeFollowsTheBucketAndItsCredentials(t *testing.T) {
	ctx := context.Background()
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)

	cond, requeue := f.probe()
	if cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != "Available" {
		t.Fatalf("first probe: %+v", cond)
	}
	if requeue < interval || requeue > interval+interval/10 {
		t.Errorf("requeue after %s, want the interval with at most 10%% jitter", requeue)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal BucketAvailable") {
		t.Errorf("events: %q", ev)
	}
	if got := available(metrics.CredentialsOperator); got != 1 {
		t.Errorf("bucket_available{operator} = %v", got)
	}

	// Not due yet: nothing is probed, nothing written.
	f.clock.Step(interval / 2)
	again, requeue := f.probe()
	if !again.LastUpdateTime.Equal(&cond.LastUpdateTime) || requeue != interval/2 {
		t.Errorf("probed before due: updated %s, requeue %s", again.LastUpdateTime, requeue)
	}

	// Deleted behind the extension's back.
	if err := f.mem.DeleteBucket(ctx, "probed"); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(interval)
	cond, _ = f.probe()
	if cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != "BucketNotFound" {
		t.Fatalf("after the bucket was deleted: %+v", cond)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Warning BucketUnavailable") {
		t.Errorf("events: %q", ev)
	}
	if got := available(metrics.CredentialsOperator); got != 0 {
		t.Errorf("bucket_available{operator} = %v", got)
	}

	// Repaired, and shoots now get generated credentials, which are then revoked.
	if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: "probed"}); err != nil {
		t.Fatal(err)
	}
	bb := f.bucket()
	bb.Status.GeneratedSecretRef = &corev1.SecretReference{Namespace: "garden", Name: "generated-bucket-probed"}
	if err := f.client.Status().Update(ctx, bb); err != nil {
		t.Fatal(err)
	}
	f.revoked["generated"] = true
	f.clock.Step(interval + interval/10)
	cond, _ = f.probe()
	if cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != "Unauthenticated" || !strings.Contains(cond.Message, "generated-bucket-probed") {
		t.Fatalf("with revoked generated credentials: %+v", cond)
	}
	if op, gen := available(metrics.CredentialsOperator), available(metrics.CredentialsGenerated); op != 1 || gen != 0 {
		t.Errorf("bucket_available operator=%v generated=%v, want 1 and 0", op, gen)
	}
	if strings.Contains(cond.Message, "operator\"") || strings.Contains(cond.Message, "\"generated\"") {
		t.Errorf("the message holds a secret value: %q", cond.Message)
	}

	delete(f.revoked, "generated")
	f.clock.Step(interval + interval/10)
	cond, _ = f.probe()
	if cond.Status != gardencorev1beta1.ConditionTrue || !strings.Contains(cond.Message, "generated credentials") {
		t.Fatalf("after repair: %+v", cond)
	}
	if ev := f.events(); len(ev) != 2 || !strings.Contains(ev[1], "Normal BucketAvailable") {
		t.Errorf("events: %q", ev)
	}

	// Generated credentials retired: the published secret holds the operator's, and the probe
	// says so instead of calling them generated.
	bb = f.bucket()
	bb.Status.Conditions = []gardencorev1beta1.Condition{{Type: ConditionGeneratedCredentials, Status: gardencorev1beta1.ConditionFalse, Reason: "Retired"}}
	if err := f.client.Status().Update(ctx, bb); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(interval + interval/10)
	cond, _ = f.probe()
	if cond.Status != gardencorev1beta1.ConditionTrue || strings.Contains(cond.Message, "generated credentials") || !strings.Contains(cond.Message, "a copy of the operator's: Retired") {
		t.Fatalf("after retirement: %+v", cond)
	}
}

func TestProbeWaitsForTheFirstSuccessfulReconcile(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateProcessing)
	if err := f.mem.DeleteBucket(context.Background(), "probed"); err != nil { // not created yet
		t.Fatal(err)
	}
	if cond, _ := f.probe(); cond != nil {
		t.Fatalf("probed a bucket that was never reconciled: %+v", cond)
	}
}

func TestProbeAfterAReconcileDoesNotWaitForTheInterval(t *testing.T) {
	ctx := context.Background()
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	first, _ := f.probe()
	f.clock.Step(time.Minute)
	bb := f.bucket()
	bb.Status.LastOperation.LastUpdateTime = metav1.NewTime(f.clock.Now())
	if err := f.client.Status().Update(ctx, bb); err != nil {
		t.Fatal(err)
	}
	second, _ := f.probe()
	if !second.LastUpdateTime.After(first.LastUpdateTime.Time) {
		t.Errorf("a reconcile since the last probe did not trigger a new one")
	}
}

func TestProbeAfterARestartDoesNotWaitForTheInterval(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	first, _ := f.probe()
	metrics.ForgetBucket("probed") // a new process serves no series yet
	f.clock.Step(time.Minute)
	f.prober.Started = f.clock.Now()
	second, _ := f.probe()
	if !second.LastUpdateTime.After(first.LastUpdateTime.Time) || available(metrics.CredentialsOperator) != 1 {
		t.Errorf("a new process waited for the interval: probed at %s (before: %s)", second.LastUpdateTime, first.LastUpdateTime)
	}
}

// TestProbeWithdrawsItsVerdict (finding 9b): a bucket being deleted, or a probe switched off
// (interval 0), keeps no BucketAvailable verdict and serves no bucket_available series; another
// writer's conditions stay.
func TestProbeWithdrawsItsVerdict(t *testing.T) {
	cases := []struct {
		name       string
		withdraw   func(*probeFixture)
		wantReason string // "": the condition is removed
	}{
		{name: "bucket being deleted", wantReason: ReasonDeleting, withdraw: func(f *probeFixture) {
			bb := f.bucket()
			bb.Finalizers = []string{"extensions.gardener.cloud/backup"}
			if err := f.client.Update(context.Background(), bb); err != nil {
				f.t.Fatal(err)
			}
			if err := f.client.Delete(context.Background(), bb); err != nil {
				f.t.Fatal(err)
			}
		}},
		{name: "probe switched off", withdraw: func(f *probeFixture) { f.prober.opts.Interval = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
			if cond, _ := f.probe(); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue {
				t.Fatalf("first probe: %+v", cond)
			}
			f.events()
			tc.withdraw(f)
			f.clock.Step(2 * interval)
			cond, requeue := f.probe()
			switch {
			case tc.wantReason == "" && cond != nil:
				t.Errorf("the condition stays: %+v", cond)
			case tc.wantReason != "" && (cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != tc.wantReason):
				t.Errorf("condition %+v, want Unknown/%s", cond, tc.wantReason)
			}
			if requeue != 0 {
				t.Errorf("requeued after %s: nothing is probed any more", requeue)
			}
			if n := testutil.CollectAndCount(metrics.BucketAvailable); n != 0 {
				t.Errorf("%d bucket_available series still served", n)
			}
			// Idempotent: a second look writes nothing.
			before := f.bucket().ResourceVersion
			f.clock.Step(2 * interval)
			f.probe()
			if f.bucket().ResourceVersion != before {
				t.Error("a second look wrote the status again")
			}
		})
	}
}

// While the seed configuration is awaited, the probe has no verdict: the plane constructors fail
// with the wait's error, which says nothing of the bucket. Nothing is written, emitted or
// measured, and the bucket is looked at again soon.
func TestProbeWritesNothingWhileTheSeedConfigurationIsAwaited(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	seeded, err := provider.WithSeedConfig(f.prober.Provider, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.prober.Provider = seeded
	cond, _ := f.probe()
	if cond == nil || cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("first probe: %+v", cond)
	}
	f.events()

	seeded.Await("the seed's Extension is not applied yet")
	f.clock.Step(2 * interval)
	again, requeue := f.probe()
	if again.Status != gardencorev1beta1.ConditionTrue || again.Reason != cond.Reason || !again.LastUpdateTime.Equal(&cond.LastUpdateTime) {
		t.Errorf("the wait changed the verdict: %+v", again)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events while waiting: %q", ev)
	}
	if got := available(metrics.CredentialsOperator); got != 1 {
		t.Errorf("bucket_available{operator} = %v while waiting; want the last probe's 1", got)
	}
	if requeue <= 0 || requeue > time.Minute {
		t.Errorf("looked at again in %s; want soon", requeue)
	}
}

// TestAGoneBucketIsNoLongerFailing: a bucket that goes while its passes fail (its finalizer
// removed by hand) takes its failing series with it; nothing else would remove it.
func TestAGoneBucketIsNoLongerFailing(t *testing.T) {
	metrics.CountOperation(metrics.KindBackupBucket, metrics.OperationReconcile, "gone", "error")
	probeLifecycle.Gone("gone")
	if metrics.OperationFailingSince.DeleteLabelValues(metrics.KindBackupBucket, "gone", metrics.OperationReconcile, "error") {
		t.Fatal("the bucket's failing series stays after it is gone")
	}
}
