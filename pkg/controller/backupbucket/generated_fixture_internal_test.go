// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	extensionsbackupbucketcontroller "github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The generated credentials of the BackupBucket controller, end to end on the in-memory store
// (which issues credentials) and a fake API server: what is issued, published, recorded, revoked
// and by which issuer, what the status and the events say, and every error's gardener code.

const genBucket = "bucket"

// recIssuer is an issuer by name over a memstore's issuer: it logs its calls ("a issue [..]",
// "a revoke [..]") and fails them with issueErr or revokeErr when set. A call whose context is
// not named for its operation (objectstore.WithOperation, which labels the cloud requests it
// makes) is logged in misnamed, which fails the test that made it.
type recIssuer struct {
	name                string
	inner               objectstore.CredentialIssuer
	calls, misnamed     *[]string
	issueErr, revokeErr error
}

// named logs in misnamed a call of ctx that is not named operation.
func (i *recIssuer) named(ctx context.Context, operation string) {
	if got := objectstore.Operation(ctx); got != operation {
		*i.misnamed = append(*i.misnamed, fmt.Sprintf("issuer %s: a call of %s named %q", i.name, operation, got))
	}
}

func (i *recIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	i.named(ctx, objectstore.OpIssueCredential)
	*i.calls = append(*i.calls, fmt.Sprintf("%s issue %v", i.name, inUse))
	if i.issueErr != nil {
		return objectstore.Credential{}, i.issueErr
	}
	return i.inner.IssueCredential(ctx, bucket, inUse)
}

func (i *recIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	i.named(ctx, objectstore.OpRevokeCredentials)
	*i.calls = append(*i.calls, fmt.Sprintf("%s revoke %v", i.name, keep))
	if i.revokeErr != nil {
		return i.revokeErr
	}
	return i.inner.RevokeCredentials(ctx, bucket, keep)
}

func (i *recIssuer) HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error) {
	i.named(ctx, objectstore.OpCredentialHeldIn)
	return i.inner.HeldIn(ctx, bucket, data)
}

func (i *recIssuer) CredentialReach(bucket string) string { return i.inner.CredentialReach(bucket) }

func (i *recIssuer) Location(ctx context.Context) (string, error) {
	i.named(ctx, objectstore.OpCredentialLocation)
	return i.inner.Location(ctx)
}

// namedIssuers serves the in-memory store with one issuer per name, as a provider with several
// identity services does; an unknown name is an invalid configuration (provider.Provider's
// contract). Its config is validated like a real provider's, errors named under providerConfig.
type namedIssuers struct {
	controllertest.Provider

	issuers map[string]*recIssuer
	// storeKeys names the issuers whose credentials are keys of the store itself
	// (objectstore.StoreKeysIssuer, as Azure's account keys).
	storeKeys map[string]bool
}

// storeKeysIssuer is a recIssuer that says its credentials are keys of the store.
type storeKeysIssuer struct{ *recIssuer }

func (storeKeysIssuer) IssuesStoreKeys() {}

func (p namedIssuers) NewIssuer(_ context.Context, _ provider.Credentials, _ *controllertest.Config, name string) (objectstore.CredentialIssuer, error) {
	i, ok := p.issuers[name]
	switch {
	case !ok:
		return nil, objectstore.Invalidf("no issuer %q", name)
	case i == nil:
		return nil, nil // these credentials issue none (an Azure account key secret)
	case p.storeKeys[name]:
		return storeKeysIssuer{i}, nil
	}
	return i, nil
}

// NewDataPlane and NewManagement serve the operator's store whatever their secret holds: it may
// hold one of the bucket's own credentials, as an Azure account key secret of the bucket's
// account does, and still manage the bucket.
func (p namedIssuers) NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error) {
	return p.Store, nil
}

func (p namedIssuers) NewManagement(context.Context, provider.Credentials, *controllertest.Config) (objectstore.Management, error) {
	return p.Store, nil
}

func (p namedIssuers) Decode(raw []byte) (*controllertest.Config, error) {
	cfg, err := p.Provider.Decode(raw)
	if err != nil {
		return nil, err
	}
	if g := cfg.Generated; g != nil {
		if err := decode.Invalid(g.Validate(field.NewPath("providerConfig", "generatedCredentials"))); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// genScheme is built once: the fake API servers of every test share it, read only.
var genScheme = sync.OnceValue(func() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	return scheme
})

type genFixture struct {
	t        *testing.T
	ctx      context.Context
	mem      *memstore.Store
	client   client.Client
	recorder *events.FakeRecorder
	provider namedIssuers
	calls    []string
	misnamed []string // issuer calls not named for their operation (recIssuer)
	actuator extensionsbackupbucketcontroller.Actuator
}

// newGenFixture holds a bucket "bucket" of type mem, its credentials secret and the store; the
// issuer "mem" issues from the store. withSecret false leaves the credentials secret out.
func newGenFixture(t *testing.T, withSecret bool) *genFixture {
	t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: genBucket},
		Spec:       extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, SecretRef: controllertest.SecretRef},
	}
	objs := []client.Object{bb}
	if withSecret {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("operator")}})
	}
	f := &genFixture{
		t:        t,
		ctx:      context.Background(),
		mem:      memstore.New(10),
		client:   fake.NewClientBuilder().WithScheme(genScheme()).WithObjects(objs...).WithStatusSubresource(bb).Build(),
		recorder: events.NewFakeRecorder(50),
	}
	f.provider = namedIssuers{Provider: controllertest.Provider{Store: f.mem}, issuers: map[string]*recIssuer{}}
	f.addIssuer("mem", f.mem)
	f.actuator = NewActuator(provider.Register(f.provider), f.client, f.client, f.recorder, options.DeletionOptions{})
	t.Cleanup(func() {
		for _, m := range f.misnamed {
			t.Error(m)
		}
	})
	return f
}

// addIssuer adds the issuer name over store's (which gets the bucket, so that it may issue).
func (f *genFixture) addIssuer(name string, store *memstore.Store) {
	if err := store.EnsureBucket(f.ctx, objectstore.Bucket{Name: genBucket}); err != nil {
		f.t.Fatal(err)
	}
	i := &recIssuer{name: name, inner: store.Issuer(), calls: &f.calls, misnamed: &f.misnamed}
	f.provider.issuers[name] = i
}

func (f *genFixture) bucket() *extensionsv1alpha1.BackupBucket {
	f.t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Name: genBucket}, bb); err != nil {
		f.t.Fatal(err)
	}
	return bb
}

// configure sets the bucket's providerConfig (nil: none).
func (f *genFixture) configure(g *credentials.Settings) {
	f.t.Helper()
	bb := f.bucket()
	bb.Spec.ProviderConfig = nil
	if g != nil {
		bb.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{Generated: g})
	}
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

// setConfig sets the bucket's providerConfig to cfg.
func (f *genFixture) setConfig(cfg controllertest.Config) {
	f.t.Helper()
	bb := f.bucket()
	bb.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

// withEntryIssuer sets the bucket's providerConfig to entryCredentials of the issuer entry ("":
// none), handing back or not.
func (f *genFixture) withEntryIssuer(entry string, handBack bool) {
	f.t.Helper()
	cfg := controllertest.Config{HandBack: handBack}
	if entry != "" {
		cfg.Entry = &credentials.EntrySettings{Issuer: entry}
	}
	f.setConfig(cfg)
}

// requestRotation sets the bucket's rotation request annotation to token.
func (f *genFixture) requestRotation(token string) {
	f.t.Helper()
	bb := f.bucket()
	metav1.SetMetaDataAnnotation(&bb.ObjectMeta, AnnotationRotateCredentials, token)
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

// restart replaces the actuator by a fresh one on the same API state and stores, as a
// controller restart does.
func (f *genFixture) restart() {
	f.actuator = NewActuator(provider.Register(f.provider), f.client, f.client, f.recorder, options.DeletionOptions{})
}

// reconcile runs the actuator on the bucket as stored, as gardener's reconciler does.
func (f *genFixture) reconcile() error {
	f.calls = nil
	return f.actuator.Reconcile(f.ctx, logr.Discard(), f.bucket())
}

func (f *genFixture) mustReconcile() {
	f.t.Helper()
	if err := f.reconcile(); err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
}

func (f *genFixture) secretKey() client.ObjectKey {
	meta := extensionsbackupbucketcontroller.GeneratedSecretObjectMeta(f.bucket())
	return client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}
}

// secret returns the generated secret, nil if there is none.
func (f *genFixture) secret() *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(f.ctx, f.secretKey(), s); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		f.t.Fatal(err)
	}
	return s
}

func (f *genFixture) mustSecret() *corev1.Secret {
	f.t.Helper()
	s := f.secret()
	if s == nil {
		f.t.Fatal("no generated secret")
	}
	return s
}

// setSecretAnnotation sets (value "": removes) an annotation of the generated secret.
func (f *genFixture) setSecretAnnotation(key, value string) {
	f.t.Helper()
	s := f.mustSecret()
	if value == "" {
		delete(s.Annotations, key)
	} else {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, value)
	}
	if err := f.client.Update(f.ctx, s); err != nil {
		f.t.Fatal(err)
	}
}

func past() string { return time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) }

func (f *genFixture) condition() *gardencorev1beta1.Condition {
	return v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionGeneratedCredentials)
}

// expectCondition checks the GeneratedCredentials condition and status.generatedSecretRef.
func (f *genFixture) expectCondition(status gardencorev1beta1.ConditionStatus, reason string, ref bool) *gardencorev1beta1.Condition {
	f.t.Helper()
	c := f.condition()
	if c == nil || c.Status != status || c.Reason != reason {
		f.t.Fatalf("condition %+v; want %s %s", c, status, reason)
	}
	got := f.bucket().Status.GeneratedSecretRef
	if !ref {
		if got != nil {
			f.t.Fatalf("status.generatedSecretRef = %+v; want none", got)
		}
		return c
	}
	if want := f.secretKey(); got == nil || got.Namespace != want.Namespace || got.Name != want.Name {
		f.t.Fatalf("status.generatedSecretRef = %+v; want %s", got, want)
	}
	return c
}

// expectPublished checks that the generated secret holds credential id of issuer, and the status.
func (f *genFixture) expectPublished(id, issuer string) *corev1.Secret {
	f.t.Helper()
	s := f.mustSecret()
	if got := string(s.Data[memstore.KeyCredential]); got != id || s.Annotations[AnnotationCredential] != id || s.Annotations[AnnotationIssuer] != issuer {
		f.t.Fatalf("generated secret holds %q, annotations %v; want %s of issuer %s", got, s.Annotations, id, issuer)
	}
	c := f.expectCondition(gardencorev1beta1.ConditionTrue, "Published", true)
	if !strings.Contains(c.Message, fmt.Sprintf("%q", id)) {
		f.t.Fatalf("condition message %q does not name %s", c.Message, id)
	}
	return s
}

func (f *genFixture) events() []string {
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

// expectEvents checks the events emitted since the last call, by "type reason" prefix.
func (f *genFixture) expectEvents(want ...string) {
	f.t.Helper()
	got := f.events()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = strings.HasPrefix(got[i], want[i]+" ")
	}
	if !ok {
		f.t.Fatalf("events %q; want %q", got, want)
	}
}

func expectValid(t *testing.T, store *memstore.Store, want ...string) {
	t.Helper()
	if got := store.Valid(genBucket); !slices.Equal(got, want) {
		t.Fatalf("valid credentials %v; want %v", got, want)
	}
}

// codes is what gardener's reconciler reports of an actuator's error.
func codes(err error) []gardencorev1beta1.ErrorCode {
	return v1beta1helper.ExtractErrorCodes(reconcilerutils.ReconcileErrCauseOrErr(err))
}

func expectCode(t *testing.T, err error, want gardencorev1beta1.ErrorCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one with code %s", want)
	}
	if got := codes(err); !slices.Equal(got, []gardencorev1beta1.ErrorCode{want}) {
		t.Fatalf("codes %v of %v; want %s", got, err, want)
	}
}

func grace(d time.Duration) *credentials.Rotation {
	return &credentials.Rotation{GracePeriod: &metav1.Duration{Duration: d}}
}

func settings(issuer string, r *credentials.Rotation) *credentials.Settings {
	return &credentials.Settings{Issuer: issuer, Generation: credentials.Generation{Rotation: r}}
}
