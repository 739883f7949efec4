// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The entry under test, its shoot's namespace and what lies around its prefix: another entry
// whose name extends it, one whose name is a prefix of it, a key that merely contains it.
const (
	testEntry     = "shoot--a--b--1"
	testNamespace = "shoot--a--b"
	testBucket    = "bucket"
)

var (
	entryKeys  = []string{testEntry + "/etcd-main/v2/Full-1", testEntry + "/etcd-main/v2/Incr-2", testEntry + "/etcd-events/v2/Full-3"}
	neighbours = []string{testEntry + "x/etcd-main/v2/Full-1", testEntry + "0/etcd-main/v2/Full-1", "shoot--a--b--2/etcd-main/v2/Full-1", "other/" + testEntry + "/z"}
)

// etcdProvider serves the fixture's store and builds the etcd-backup secret from exactly two
// keys of the entry's secret, as a real provider picks what etcd-backup-restore reads.
type etcdProvider struct {
	controllertest.Provider

	newStoreErr error
}

func (p etcdProvider) NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error) {
	if p.newStoreErr != nil {
		return nil, p.newStoreErr
	}
	return p.Store, nil
}

func (p etcdProvider) NewManagement(context.Context, provider.Credentials, *controllertest.Config) (objectstore.Management, error) {
	if p.newStoreErr != nil {
		return nil, p.newStoreErr
	}
	return p.Store, nil
}

func (etcdProvider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return map[string][]byte{"bucketName": data["bucketName"], "accessKey": data["key"]}, nil
}

// clientManager is the one thing gardener's generic actuator takes from a manager: its client.
type clientManager struct {
	manager.Manager

	c client.Client
}

func (m clientManager) GetClient() client.Client { return m.c }

type entryFixture struct {
	t        *testing.T
	mem      *memstore.Store
	store    *memstore.Faults
	client   client.Client
	recorder *events.FakeRecorder
	provider etcdProvider
	be       *extensionsv1alpha1.BackupEntry
	// parallelism of the deletion engine (default 1: passes are deterministic).
	parallelism int
}

// newEntryFixture holds a bucket with the entry's keys and the neighbours, versioned if asked,
// the credentials secret (with one key more than the etcd-backup secret takes), the shoot's
// namespace and the entry.
func newEntryFixture(t *testing.T, versioned bool) *entryFixture {
	t.Helper()
	ctx := context.Background()
	mem := memstore.New(3)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: testBucket}); err != nil {
		t.Fatal(err)
	}
	if versioned {
		if err := mem.SetVersioning(ctx, testBucket, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range append(slices.Clone(entryKeys), neighbours...) {
		if err := mem.PutObject(ctx, testBucket, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	_ = operatorv1alpha1.AddToScheme(scheme)
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: testEntry},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: testBucket, Region: "local", SecretRef: controllertest.SecretRef}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&extensionsv1alpha1.BackupEntry{}).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name},
			Data: map[string][]byte{"key": []byte("value"), "unrelated": []byte("not for the shoot")}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}},
		be,
	).Build()
	store := memstore.WithFaults(mem)
	return &entryFixture{t: t, mem: mem, store: store, client: c, recorder: events.NewFakeRecorder(100),
		provider: etcdProvider{Provider: controllertest.Provider{Store: store}}, be: be, parallelism: 1}
}

func (f *entryFixture) delegate() *delegate {
	return newDelegate(provider.Register(f.provider), f.client, f.client, f.recorder, options.DeletionOptions{Parallelism: f.parallelism})
}

// actuator is the entry controller's actuator as AddToManager builds it.
func (f *entryFixture) actuator() *holdingActuator {
	d := f.delegate()
	return &holdingActuator{Actuator: genericactuator.NewActuator(clientManager{c: f.client}, d), manager: clientManager{c: f.client}, client: f.client, reader: f.client, provider: d.provider, entries: d}
}

// current reads the entry back from the API server.
func (f *entryFixture) current() *extensionsv1alpha1.BackupEntry {
	f.t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: f.be.Name}, be); err != nil {
		f.t.Fatal(err)
	}
	return be
}

func (f *entryFixture) held() bool {
	return controllerutil.ContainsFinalizer(f.current(), entryinfo.FinalizerName)
}

// versions lists every version (delete markers included) under prefix, as "key@version".
func (f *entryFixture) versions(prefix string) []string {
	f.t.Helper()
	var out []string
	err := f.mem.ListObjects(context.Background(), testBucket, prefix, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			out = append(out, o.Key+"@"+o.Version)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// outside lists every version outside the entry's prefix.
func (f *entryFixture) outside() []string {
	return slices.DeleteFunc(f.versions(""), func(v string) bool { return strings.HasPrefix(v, testEntry+"/") })
}

func (f *entryFixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// codes are the error codes the library's reconciler writes into status.lastError for err.
func codes(err error) []gardencorev1beta1.ErrorCode {
	return v1beta1helper.ExtractErrorCodes(reconcilerutils.ReconcileErrCauseOrErr(err))
}

// isRequeue says whether err is what the library's reconcilers requeue without back-off: a
// *RequeueAfterError as the outermost error (they type-assert, not errors.As).
func isRequeue(err error) (time.Duration, bool) {
	r, ok := err.(*reconcilerutils.RequeueAfterError)
	if !ok {
		return 0, false
	}
	return r.RequeueAfter, true
}

func wrap(sentinel error) error { return fmt.Errorf("sdk said no: %w", sentinel) }

// TestReconcileWritesTheProvidersKeysAndHoldsTheEntry: a reconcile sets the finalizer before
// anything else and writes the shoot's etcd-backup secret with exactly the provider's keys.
func TestReconcileWritesTheProvidersKeysAndHoldsTheEntry(t *testing.T) {
	f := newEntryFixture(t, false)
	if err := f.actuator().Reconcile(context.Background(), logr.Discard(), f.be); err != nil {
		t.Fatalf("Reconcile = %v", err)
	}
	if !f.held() {
		t.Fatalf("finalizer %s not set by a reconcile", entryinfo.FinalizerName)
	}
	secret := &corev1.Secret{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "etcd-backup"}, secret); err != nil {
		t.Fatalf("etcd-backup secret: %v", err)
	}
	want := map[string][]byte{"bucketName": []byte(testBucket), "accessKey": []byte("value")}
	if !maps.EqualFunc(secret.Data, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("etcd-backup secret data keys %v; want exactly the provider's %v", slices.Sorted(maps.Keys(secret.Data)), slices.Sorted(maps.Keys(want)))
	}
	if got, listed := f.store.Calls(memstore.OpProbe), f.store.Calls(memstore.OpListObjects); got != 1 || listed != 0 {
		t.Fatalf("the bucket was checked with %d probes and %d listings; want one probe and no listing", got, listed)
	}
	if left := f.versions(testEntry + "/"); len(left) != len(entryKeys) {
		t.Fatalf("a reconcile changed the entry's objects: %v", left)
	}
}

// TestReconcileErrorCodes: a reconcile whose bucket check fails writes no etcd-backup secret
// (the shoot's sidecar would not reach its bucket) and reports the code of the store's refusal.
func TestReconcileErrorCodes(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(*entryFixture)
		wantCode gardencorev1beta1.ErrorCode
		wantErr  string
	}{
		{name: "unauthenticated", setup: func(f *entryFixture) { f.store.Fail(memstore.OpProbe, wrap(objectstore.ErrUnauthenticated)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthenticated},
		{name: "forbidden", setup: func(f *entryFixture) { f.store.Fail(memstore.OpProbe, wrap(objectstore.ErrForbidden)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthorized},
		{name: "throttled", setup: func(f *entryFixture) { f.store.Fail(memstore.OpProbe, wrap(objectstore.ErrThrottled)) }, wantCode: gardencorev1beta1.ErrorInfraRateLimitsExceeded},
		{name: "bucket missing", setup: func(f *entryFixture) { f.be.Spec.BucketName = "gone" }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: `spec.bucketName: bucket "gone" does not exist`},
		{name: "invalid credentials", setup: func(f *entryFixture) { f.provider.newStoreErr = objectstore.Invalidf("accessKeyID: Required value") }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: "accessKeyID: Required value"},
		{name: "unclassified", setup: func(f *entryFixture) { f.store.Fail(memstore.OpProbe, errors.New("connection reset")) }, wantErr: "connection reset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			// Held already: the finalizer's patch would read the spec back over the setup's.
			if err := f.actuator().hold(context.Background(), f.be); err != nil {
				t.Fatal(err)
			}
			c.setup(f)
			err := f.actuator().Reconcile(context.Background(), logr.Discard(), f.be)
			if err == nil {
				t.Fatal("Reconcile succeeded")
			}
			got := codes(err)
			if c.wantCode == "" && len(got) != 0 || c.wantCode != "" && !slices.Equal(got, []gardencorev1beta1.ErrorCode{c.wantCode}) {
				t.Fatalf("codes %v of %v; want [%s]", got, err, c.wantCode)
			}
			if c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Reconcile = %v; want it to say %q", err, c.wantErr)
			}
			err = f.client.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "etcd-backup"}, &corev1.Secret{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("etcd-backup secret written although the bucket check failed (get: %v)", err)
			}
		})
	}
}

// misLister lists one key outside the prefix it is asked for, as a broken store would.
type misLister struct{ controllertest.Store }

func (s misLister) ListObjects(_ context.Context, _, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return fn([]objectstore.ObjectVersion{{Key: "other/" + prefix + "z"}})
}

// TestDeletion runs the entry actuator's deletion on every path: it releases the entry only when
// nothing deletable is left under the prefix (locked objects only when their deletion is deferred
// and verified), maps every failure to its code and never touches anything outside the prefix.
func TestDeletion(t *testing.T) {
	lockedUntil := time.Now().Add(10 * time.Minute).Truncate(time.Second).UTC()
	lock := func(f *entryFixture) { f.mem.Lock(testBucket, entryKeys[0], lockedUntil) }
	cases := []struct {
		name        string
		setup       func(*entryFixture)
		wantDone    bool
		wantCode    gardencorev1beta1.ErrorCode // "": none
		wantRequeue time.Duration               // 0: not requeued at once
		wantErr     string
		wantLeft    []string // keys left under the prefix
		wantEvent   string   // reason of the last event
	}{
		{name: "objects deleted", setup: func(*entryFixture) {}, wantDone: true, wantEvent: ReasonPrefixDeleted},
		{name: "source entry deletes the shoot's prefix", setup: func(f *entryFixture) {
			// As in gardener's flow: the live entry has moved to the destination seed, and the
			// source entry is created after the source's last snapshot.
			if err := f.client.Delete(context.Background(), f.be.DeepCopy()); err != nil {
				f.t.Fatal(err)
			}
			src := f.be.DeepCopy()
			src.Name, src.ResourceVersion, src.CreationTimestamp = "source-"+testEntry, "", metav1.Now()
			if err := f.client.Create(context.Background(), src); err != nil {
				f.t.Fatal(err)
			}
			f.be = src
			if err := f.actuator().hold(context.Background(), f.be); err != nil {
				f.t.Fatal(err)
			}
		}, wantDone: true},
		{name: "bucket gone: nothing left", setup: func(f *entryFixture) { f.be.Spec.BucketName = "gone" }, wantDone: true, wantLeft: entryKeys},

		{name: "listing unauthenticated", setup: func(f *entryFixture) { f.store.Fail(memstore.OpListObjects, wrap(objectstore.ErrUnauthenticated)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthenticated, wantLeft: entryKeys},
		{name: "listing forbidden", setup: func(f *entryFixture) { f.store.Fail(memstore.OpListObjects, wrap(objectstore.ErrForbidden)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthorized, wantLeft: entryKeys},
		{name: "listing throttled", setup: func(f *entryFixture) { f.store.Fail(memstore.OpListObjects, wrap(objectstore.ErrThrottled)) }, wantCode: gardencorev1beta1.ErrorInfraRateLimitsExceeded, wantRequeue: lasterror.ThrottledRequeue, wantLeft: entryKeys},
		{name: "listing over quota", setup: func(f *entryFixture) { f.store.Fail(memstore.OpListObjects, wrap(objectstore.ErrQuotaExceeded)) }, wantCode: gardencorev1beta1.ErrorInfraQuotaExceeded, wantLeft: entryKeys},
		{name: "listing unclassified", setup: func(f *entryFixture) { f.store.Fail(memstore.OpListObjects, errors.New("connection reset")) }, wantErr: "connection reset", wantLeft: entryKeys},
		{name: "listing outside the prefix", setup: func(f *entryFixture) { f.provider.Store = misLister{f.store} }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: "outside the requested prefix", wantLeft: entryKeys},
		{name: "delete request unauthenticated", setup: func(f *entryFixture) { f.store.Fail(memstore.OpDeleteObjects, wrap(objectstore.ErrUnauthenticated)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthenticated, wantLeft: entryKeys},
		{name: "delete request forbidden", setup: func(f *entryFixture) { f.store.Fail(memstore.OpDeleteObjects, wrap(objectstore.ErrForbidden)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthorized, wantLeft: entryKeys},
		{name: "every object forbidden", setup: func(f *entryFixture) { f.store.FailObjects(wrap(objectstore.ErrForbidden)) }, wantCode: gardencorev1beta1.ErrorInfraUnauthorized, wantErr: "could not be deleted", wantLeft: entryKeys},
		{name: "objects failing unclassified", setup: func(f *entryFixture) { f.store.FailObjects(errors.New("disk on fire")) }, wantErr: "disk on fire", wantLeft: entryKeys},
		{name: "invalid credentials", setup: func(f *entryFixture) { f.provider.newStoreErr = objectstore.Invalidf("accessKeyID: Required value") }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: "accessKeyID", wantLeft: entryKeys},
		{name: "credentials secret missing", setup: func(f *entryFixture) { f.be.Spec.SecretRef.Name = "gone" }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: "spec.secretRef: credentials secret garden/gone does not exist", wantLeft: entryKeys},
		{name: "no bucket name", setup: func(f *entryFixture) { f.be.Spec.BucketName = "" }, wantCode: gardencorev1beta1.ErrorConfigurationProblem, wantErr: "spec.bucketName", wantLeft: entryKeys},

		{name: "locked, deferral verified", setup: lock, wantDone: true, wantLeft: entryKeys[:1], wantEvent: ReasonPrefixDeleted},
		{name: "locked, store cannot defer", setup: func(f *entryFixture) {
			lock(f)
			f.store.Fail(memstore.OpDeferDeletion, wrap(objectstore.ErrUnsupported))
		}, wantCode: gardencorev1beta1.ErrorInfraDependencies, wantRequeue: 10 * time.Minute, wantErr: "1 object versions are held by retention locks until " + lockedUntil.Format(time.RFC3339), wantLeft: entryKeys[:1]},
		{name: "locked, deferral forbidden", setup: func(f *entryFixture) {
			lock(f)
			f.store.Fail(memstore.OpDeferDeletion, wrap(objectstore.ErrForbidden))
		}, wantCode: gardencorev1beta1.ErrorInfraUnauthorized, wantLeft: entryKeys[:1]},
		{name: "locked, deferral throttled", setup: func(f *entryFixture) {
			lock(f)
			f.store.Fail(memstore.OpDeferDeletion, wrap(objectstore.ErrThrottled))
		}, wantCode: gardencorev1beta1.ErrorInfraRateLimitsExceeded, wantRequeue: lasterror.ThrottledRequeue, wantLeft: entryKeys[:1]},
		{name: "locked, rule not read back", setup: func(f *entryFixture) {
			lock(f)
			f.store.Fail(memstore.OpDeferDeletion, errors.New("rule read back differs"))
		}, wantErr: "rule read back differs", wantLeft: entryKeys[:1]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			ctx := context.Background()
			act := f.actuator()
			if err := act.hold(ctx, f.be); err != nil {
				t.Fatal(err)
			}
			outside := f.outside()
			c.setup(f)
			act = f.actuator()

			err := act.Delete(ctx, logr.Discard(), f.be)
			if c.wantDone != (err == nil) {
				t.Fatalf("Delete = %v; want done=%v", err, c.wantDone)
			}
			if f.held() == c.wantDone {
				t.Fatalf("finalizer held=%v after Delete = %v; want it released exactly when done", !c.wantDone, err)
			}
			if got := codes(err); c.wantCode == "" && len(got) != 0 || c.wantCode != "" && !slices.Equal(got, []gardencorev1beta1.ErrorCode{c.wantCode}) {
				t.Fatalf("codes %v of %v; want [%s]", got, err, c.wantCode)
			}
			wait, requeued := isRequeue(err)
			if requeued != (c.wantRequeue != 0) || requeued && (wait < c.wantRequeue-time.Minute || wait > c.wantRequeue) {
				t.Fatalf("requeue after %v (requeued %v) of %v; want %v", wait, requeued, err, c.wantRequeue)
			}
			if c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Delete = %v; want it to say %q", err, c.wantErr)
			}
			var left []string
			for _, v := range f.versions(testEntry + "/") {
				left = append(left, strings.SplitN(v, "@", 2)[0])
			}
			if want := slices.Sorted(slices.Values(c.wantLeft)); !slices.Equal(left, want) {
				t.Fatalf("left under the prefix %v; want %v", left, want)
			}
			if after := f.outside(); !slices.Equal(after, outside) {
				t.Fatalf("the deletion touched what lies outside %s/:\nbefore %v\nafter  %v", testEntry, outside, after)
			}
			evs := f.events()
			if c.wantEvent != "" && (len(evs) == 0 || !strings.Contains(evs[len(evs)-1], c.wantEvent)) {
				t.Fatalf("events %v; want the last to be %s", evs, c.wantEvent)
			}
			if !c.wantDone && slices.ContainsFunc(evs, func(e string) bool { return strings.Contains(e, ReasonPrefixDeleted) }) {
				t.Fatalf("event %s emitted for a deletion that is not done: %v", ReasonPrefixDeleted, evs)
			}
			if c.name == "locked, deferral verified" {
				if f.store.Calls(memstore.OpDeferDeletion) != 1 || !slices.ContainsFunc(evs, func(e string) bool { return strings.Contains(e, ReasonLockedObjectsDeferred) }) {
					t.Fatalf("DeferDeletion asked %d times, events %v; want it asked once and reported", f.store.Calls(memstore.OpDeferDeletion), evs)
				}
			} else if c.wantLeft == nil && f.store.Calls(memstore.OpDeferDeletion) != 0 {
				t.Fatal("DeferDeletion asked although nothing was locked")
			}
		})
	}
}

// TestDeletionRemovesVersionsAndDeleteMarkers: on a versioned bucket the entry's noncurrent
// versions and delete markers go too, while a neighbour's delete marker and versions stay.
func TestDeletionRemovesVersionsAndDeleteMarkers(t *testing.T) {
	f := newEntryFixture(t, true)
	ctx := context.Background()
	for _, k := range []string{entryKeys[0], entryKeys[1], neighbours[0]} {
		if err := f.mem.PutObject(ctx, testBucket, k, []byte("again")); err != nil {
			t.Fatal(err)
		}
	}
	// Plain deletes: delete markers over the entry's first key and over a neighbour.
	if errs, err := f.mem.DeleteObjects(ctx, testBucket, []objectstore.ObjectVersion{{Key: entryKeys[0]}, {Key: neighbours[0]}}); err != nil || len(errs) > 0 {
		t.Fatal(errs, err)
	}
	if got := f.versions(testEntry + "/"); len(got) != len(entryKeys)+3 {
		t.Fatalf("setup: %d versions under the prefix (%v); want %d", len(got), got, len(entryKeys)+3)
	}
	act := f.actuator()
	if err := act.hold(ctx, f.be); err != nil {
		t.Fatal(err)
	}
	outside := f.outside()
	if err := act.Delete(ctx, logr.Discard(), f.be); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if left := f.versions(testEntry + "/"); len(left) != 0 {
		t.Fatalf("left under the prefix: %v; want no version and no delete marker", left)
	}
	if after := f.outside(); !slices.Equal(after, outside) || len(after) != len(neighbours)+2 {
		t.Fatalf("outside the prefix before %v, after %v; want the neighbours' versions and marker untouched", outside, after)
	}
	if f.held() {
		t.Fatal("finalizer kept after a complete deletion")
	}
}

// TestDeletionResumesAcrossPasses: a pass cut off by the reconcile's deadline keeps what it
// deleted, returns "in progress" (requeued at once, no error code, the entry held), and the next
// pass resumes and finishes.
func TestDeletionResumesAcrossPasses(t *testing.T) {
	f := newEntryFixture(t, false)
	ctx := context.Background()
	many := make([]string, 30)
	for i := range many {
		many[i] = fmt.Sprintf("%s/etcd-main/v2/Incr-%04d", testEntry, i)
	}
	for _, k := range many {
		if err := f.mem.PutObject(ctx, testBucket, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	total := len(many) + len(entryKeys)
	act := f.actuator()
	if err := act.hold(ctx, f.be); err != nil {
		t.Fatal(err)
	}
	outside := f.outside()
	// Two delete requests go through; the third hangs until the pass is cut off.
	f.store.HangAfter(memstore.OpDeleteObjects, 2)
	pass, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := act.Delete(pass, logr.Discard(), f.be)
	wait, requeued := isRequeue(err)
	if !requeued || wait != lasterror.ProgressRequeue || !errors.As(reconcilerutils.ReconcileErrCauseOrErr(err), new(*lasterror.InProgressError)) {
		t.Fatalf("first pass = %v; want an in-progress error requeued after %v", err, lasterror.ProgressRequeue)
	}
	if got := codes(err); len(got) != 0 {
		t.Fatalf("first pass codes %v; a deletion in progress is no failure", got)
	}
	if !strings.Contains(err.Error(), "6 object versions deleted") {
		t.Fatalf("first pass = %v; want the 6 versions of its 2 batches counted", err)
	}
	if left := len(f.versions(testEntry + "/")); left != total-6 {
		t.Fatalf("%d versions left after the first pass; want %d (deleted stays deleted, the hung batch is not lost)", left, total-6)
	}
	if !f.held() {
		t.Fatal("finalizer released after a pass that was cut off")
	}
	if evs := f.events(); len(evs) != 0 {
		t.Fatalf("events after an unfinished pass: %v", evs)
	}

	f.store.HangAfter(memstore.OpDeleteObjects, -1)
	if err := act.Delete(ctx, logr.Discard(), f.be); err != nil {
		t.Fatalf("second pass = %v; want done", err)
	}
	if left := f.versions(testEntry + "/"); len(left) != 0 || f.held() {
		t.Fatalf("after the second pass %v left, finalizer held %v", left, f.held())
	}
	if after := f.outside(); !slices.Equal(after, outside) {
		t.Fatalf("outside the prefix before %v, after %v", outside, after)
	}
}

// TestMigrateReleasesWithoutDeleting: a migrated entry's objects belong to the destination seed.
func TestMigrateReleasesWithoutDeleting(t *testing.T) {
	f := newEntryFixture(t, false)
	ctx := context.Background()
	act := f.actuator()
	if err := act.Restore(ctx, logr.Discard(), f.be); err != nil || !f.held() {
		t.Fatalf("Restore = %v, held %v; want the entry held", err, f.held())
	}
	if err := act.Migrate(ctx, logr.Discard(), f.be); err != nil || f.held() {
		t.Fatalf("Migrate = %v, held %v; want the entry released", err, f.held())
	}
	if left := f.versions(testEntry + "/"); len(left) != len(entryKeys) {
		t.Fatalf("Migrate deleted objects: %v left", left)
	}
}
