// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials/credtest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The entry under test, its shoot's namespace and its bucket.
const (
	testEntry     = "shoot--a--b--1"
	testNamespace = "shoot--a--b"
	testBucket    = "bucket"
)

// entryCredProvider is the fixture's provider whose etcd-backup secret keeps the entry secret's
// key names ("key"), as the real providers' do, so that a published secret reads back as one.
type entryCredProvider struct{ controllertest.Provider }

func (entryCredProvider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return map[string][]byte{"bucketName": data["bucketName"], "key": data["key"]}, nil
}

// clientManager is the one thing gardener's generic actuator takes from a manager: its client.
type clientManager struct {
	manager.Manager

	c client.Client
}

func (m clientManager) GetClient() client.Client { return m.c }

// passes drives the entry credentials as the BackupEntry controller's actuator does: Data within
// gardener's generic actuator's write of the etcd-backup secret, then Settle, per reconcile or
// restore pass; RetireMigrated after Migrate; KeepForDeletion before the secret's deletion and
// RevokeDeleted after it. Nothing of the controller's own (finalizer, bucket check, the objects'
// deletion) is here: package backupentry tests that wiring.
type passes struct {
	creds *entrycredentials.Credentials
	p     provider.Provider
	// client is what gardener's generic actuator writes with.
	client client.Client
}

// passData is the delegate of one pass: gardener's generic actuator asks it for the data.
type passData struct {
	*passes

	o *entrycredentials.Outcome
}

func (d passData) GetETCDSecretData(ctx context.Context, _ logr.Logger, be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	out, err := d.p.EtcdBackupSecretData(be, data)
	if err != nil {
		return nil, lasterror.For(err)
	}
	out, err = d.creds.Data(ctx, be, d.o, data, out)
	return out, lasterror.For(err)
}

func (passData) Delete(context.Context, logr.Logger, *extensionsv1alpha1.BackupEntry) error {
	return nil
}

func (a *passes) generic(o *entrycredentials.Outcome) genericactuator.BackupEntryDelegate {
	return passData{passes: a, o: o}
}

// Reconcile is one reconcile pass.
func (a *passes) Reconcile(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	o := &entrycredentials.Outcome{}
	return a.creds.Settle(ctx, log, be, o, genericactuator.NewActuator(clientManager{c: a.client}, a.generic(o)).Reconcile(ctx, log, be))
}

// upToTheWrite runs a pass up to gardener's write of the etcd-backup secret and stops there, as
// a restart right after that write does: nothing of the pass's own settling runs.
func (a *passes) upToTheWrite(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	return genericactuator.NewActuator(clientManager{c: a.client}, a.generic(&entrycredentials.Outcome{})).Reconcile(ctx, log, be)
}

// Delete is one deletion pass.
func (a *passes) Delete(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	if err := a.creds.KeepForDeletion(ctx, be); err != nil {
		return err
	}
	if err := genericactuator.NewActuator(clientManager{c: a.client}, a.generic(nil)).Delete(ctx, log, be); err != nil {
		return err
	}
	return a.creds.RevokeDeleted(ctx, log, be)
}

// Migrate is one Migrate pass.
func (a *passes) Migrate(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	if err := genericactuator.NewActuator(clientManager{c: a.client}, a.generic(nil)).Migrate(ctx, log, be); err != nil {
		return err
	}
	return a.creds.RetireMigrated(ctx, be)
}

// entryCredFixture is an API server (controller-runtime's fake client) with the entry, its
// credentials secret and its shoot's namespace, and an entry issuer.
type entryCredFixture struct {
	t        *testing.T
	client   client.WithWatch
	recorder *events.FakeRecorder
	provider controllertest.Provider
	be       *extensionsv1alpha1.BackupEntry
	issuer   *credtest.Issuer
}

// scheme is the fixtures' scheme (built once: every restart the harness cuts is a fixture).
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = extensionsv1alpha1.AddToScheme(s)
	return s
}()

// newEntryCredFixture holds the entry name, entryCredentials on (issuer "fake") or off.
func newEntryCredFixture(t *testing.T, name string, on bool) *entryCredFixture {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: testBucket, Region: "local", SecretRef: controllertest.SecretRef}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&extensionsv1alpha1.BackupEntry{}).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name},
			Data: map[string][]byte{"key": []byte("value"), "unrelated": []byte("not for the shoot")}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}},
		be,
	).Build()
	issuer := credtest.NewIssuer()
	f := &entryCredFixture{t: t, client: c, recorder: events.NewFakeRecorder(100), provider: controllertest.Provider{EntryIssuer: issuer}, be: be, issuer: issuer}
	f.switchTo(on)
	return f
}

// registered is the fixture's provider as the controller registers it.
func (f *entryCredFixture) registered() provider.Provider {
	return provider.Register(entryCredProvider{f.provider})
}

// actuator drives fresh entry credentials: every call is a controller that just started, on
// the same API state.
func (f *entryCredFixture) actuator() *passes {
	return f.actuatorOf(f.registered(), f.client)
}

// actuatorOf drives fresh entry credentials of p that write with writer.
func (f *entryCredFixture) actuatorOf(p provider.Provider, writer client.Client) *passes {
	return &passes{creds: entrycredentials.New(p, f.client, writer, f.recorder), p: p, client: f.client}
}

// createSibling creates a second entry of f's shoot namespace with f's spec, whose prefix starts
// with f's (shoot--a--b--10 beside shoot--a--b--1), and returns its name.
func (f *entryCredFixture) createSibling() string {
	f.t.Helper()
	second := testEntry + "0"
	if err := f.client.Create(context.Background(), &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}, Spec: f.current().Spec}); err != nil {
		f.t.Fatal(err)
	}
	return second
}

// siblingBetweenWriteAndRecord creates a sibling entry (createSibling) and returns the actuator
// of the first entry (f.be, named first), whose settling reads the secret to record on it: the
// second entry's whole pass runs just before that read, after the first entry's write, once.
// *interleaved says whether it ran.
func (f *entryCredFixture) siblingBetweenWriteAndRecord() (a *passes, first, second string, interleaved *bool) {
	first, second = f.be.Name, f.createSibling()
	key := entryinfo.EtcdBackupSecretKey(f.be)
	interleaved = new(bool)
	writer := interceptor.NewClient(f.client, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok && k == key && !*interleaved {
				*interleaved = true
				f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}}
				f.mustReconcile()
			}
			return c.Get(ctx, k, obj, opts...)
		},
	})
	a = f.actuatorOf(f.registered(), writer)
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
	return a, first, second, interleaved
}

// current reads the entry back from the API server.
func (f *entryCredFixture) current() *extensionsv1alpha1.BackupEntry {
	f.t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: f.be.Name}, be); err != nil {
		f.t.Fatal(err)
	}
	return be
}

func (f *entryCredFixture) events() []string {
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

// switchTo sets entryCredentials in the entry's providerConfig (gardenlet's copy of its bucket's).
func (f *entryCredFixture) switchTo(on bool) {
	var settings *credentials.EntrySettings
	if on {
		settings = &credentials.EntrySettings{Issuer: "fake"}
	}
	f.configure(settings)
}

// configure sets the entry's providerConfig to entryCredentials settings (nil: off).
func (f *entryCredFixture) configure(settings *credentials.EntrySettings) {
	cfg := controllertest.Config{Entry: settings}
	f.be = f.current()
	f.be.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(context.Background(), f.be); err != nil {
		f.t.Fatal(err)
	}
}

// allowBucketCredentialAtQuota switches entryCredentials on with the opt-in fallback at the
// store's quota.
func (f *entryCredFixture) allowBucketCredentialAtQuota() {
	f.configure(&credentials.EntrySettings{Issuer: "fake", EntryGeneration: credentials.EntryGeneration{AllowBucketCredentialAtQuota: true}})
}

func (f *entryCredFixture) reconcile() error {
	f.be = f.current()
	return f.actuator().Reconcile(context.Background(), logr.Discard(), f.be)
}

func (f *entryCredFixture) mustReconcile() {
	f.t.Helper()
	if err := f.reconcile(); err != nil {
		f.t.Fatalf("Reconcile = %v", err)
	}
}

// crashAfterWrite runs a pass up to gardener's write of the etcd-backup secret and stops there,
// as a restart right after that write does.
func (f *entryCredFixture) crashAfterWrite() {
	f.t.Helper()
	if err := f.actuator().upToTheWrite(context.Background(), logr.Discard(), f.current()); err != nil {
		f.t.Fatalf("the pass up to the write: %v", err)
	}
}

// etcdBackup reads the entry's etcd-backup secret.
func (f *entryCredFixture) etcdBackup() *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(context.Background(), entryinfo.EtcdBackupSecretKey(f.be), s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// record is the entry's record on its etcd-backup secret.
func (f *entryCredFixture) record() entryrecord.Record {
	f.t.Helper()
	r, _, err := entryrecord.Read(f.be.Name, f.etcdBackup().Annotations)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// changeRecord changes the entry's record on its etcd-backup secret.
func (f *entryCredFixture) changeRecord(change func(*entryrecord.Record)) {
	f.t.Helper()
	s := f.etcdBackup()
	r, _, err := entryrecord.Read(f.be.Name, s.Annotations)
	if err != nil {
		f.t.Fatal(err)
	}
	change(&r)
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	entryrecord.Write(s.Annotations, r)
	if err := f.client.Update(context.Background(), s); err != nil {
		f.t.Fatal(err)
	}
}

func (f *entryCredFixture) published() string { return string(f.etcdBackup().Data["key"]) }

func (f *entryCredFixture) condition() *gardencorev1beta1.Condition {
	return v1beta1helper.GetCondition(f.current().Status.Conditions, entrycredentials.ConditionEntryCredentials)
}

func (f *entryCredFixture) wantCondition(status gardencorev1beta1.ConditionStatus, reason, says string) {
	f.t.Helper()
	c := f.condition()
	if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, says) {
		f.t.Fatalf("condition %+v; want %s/%s saying %q", c, status, reason, says)
	}
}

func (f *entryCredFixture) isolation(kind string) float64 {
	return testutil.ToFloat64(metrics.EntryIsolation.WithLabelValues(f.be.Name, kind))
}

// isolations are the isolation values of the entry's series set to 1 (one is expected).
func (f *entryCredFixture) isolations() []string {
	ch := make(chan prometheus.Metric, 100)
	metrics.EntryIsolation.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			f.t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entry"] == f.be.Name && d.GetGauge().GetValue() == 1 {
			out = append(out, labels["isolation"])
		}
	}
	return out
}

// rotating is entryCredentials with a rotation period of a day and grace.
func rotating(grace time.Duration) *credentials.EntrySettings {
	return &credentials.EntrySettings{Issuer: "fake", EntryGeneration: credentials.EntryGeneration{Rotation: &credentials.Rotation{
		Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: grace}}}}
}

// age sets the recorded issue time of the published credential (a record without one: "").
func (f *entryCredFixture) age(issued string) {
	f.t.Helper()
	at, _ := time.Parse(time.RFC3339, issued)
	f.changeRecord(func(r *entryrecord.Record) { r.Published.IssuedAt = at })
}

// requestRotation sets AnnotationRotateCredentials on the entry.
func (f *entryCredFixture) requestRotation(token string) {
	f.t.Helper()
	be := f.current()
	if be.Annotations == nil {
		be.Annotations = map[string]string{}
	}
	be.Annotations[entrycredentials.AnnotationRotateCredentials] = token
	if err := f.client.Update(context.Background(), be); err != nil {
		f.t.Fatal(err)
	}
}

// codes are the error codes the library's reconciler writes into status.lastError for err.
func codes(err error) []gardencorev1beta1.ErrorCode {
	return v1beta1helper.ExtractErrorCodes(reconcilerutils.ReconcileErrCauseOrErr(err))
}
