package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gardenerbackupbucket "github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
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

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	corecontroller "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The generated credentials of the BackupBucket controller, end to end on the in-memory store
// (which issues credentials) and a fake API server: what is issued, published, recorded, revoked
// and by which issuer, what the status and the events say, and every error's gardener code.

const genBucket = "bucket"

// recIssuer is an issuer by name over a memstore's issuer: it logs its calls ("a issue [..]",
// "a revoke [..]") and fails them with issueErr or revokeErr when set.
type recIssuer struct {
	name                string
	inner               objectstore.CredentialIssuer
	calls               *[]string
	issueErr, revokeErr error
}

func (i *recIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	*i.calls = append(*i.calls, fmt.Sprintf("%s issue %v", i.name, inUse))
	if i.issueErr != nil {
		return objectstore.Credential{}, i.issueErr
	}
	return i.inner.IssueCredential(ctx, bucket, inUse)
}

func (i *recIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	*i.calls = append(*i.calls, fmt.Sprintf("%s revoke %v", i.name, keep))
	if i.revokeErr != nil {
		return i.revokeErr
	}
	return i.inner.RevokeCredentials(ctx, bucket, keep)
}

// namedIssuers serves the in-memory store with one issuer per name, as a provider with several
// identity services does; an unknown name is an invalid configuration (provider.Provider's
// contract). Its config is validated like a real provider's, errors named under providerConfig.
type namedIssuers struct {
	controllertest.Provider
	issuers map[string]*recIssuer
}

func (p namedIssuers) NewIssuer(_ context.Context, _ provider.Credentials, _ config.Bucket, name string) (objectstore.CredentialIssuer, error) {
	i, ok := p.issuers[name]
	if !ok {
		return nil, objectstore.Invalidf("no issuer %q", name)
	}
	return i, nil
}

func (p namedIssuers) DecodeBucketConfig(raw []byte) (config.Bucket, error) {
	cfg, err := p.Provider.DecodeBucketConfig(raw)
	if err != nil || cfg == nil {
		return cfg, err
	}
	if g := cfg.(*controllertest.Config).Generated; g != nil {
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
	actuator gardenerbackupbucket.Actuator
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
	f.actuator = NewActuator(f.provider, f.client, f.client, f.recorder, corecontroller.DeletionOptions{})
	return f
}

// addIssuer adds the issuer name over store's (which gets the bucket, so that it may issue).
func (f *genFixture) addIssuer(name string, store *memstore.Store) *recIssuer {
	if err := store.EnsureBucket(f.ctx, objectstore.Bucket{Name: genBucket}); err != nil {
		f.t.Fatal(err)
	}
	i := &recIssuer{name: name, inner: store.Issuer(), calls: &f.calls}
	f.provider.issuers[name] = i
	return i
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

func (f *genFixture) annotateBucket(key, value string) {
	f.t.Helper()
	bb := f.bucket()
	metav1.SetMetaDataAnnotation(&bb.ObjectMeta, key, value)
	if err := f.client.Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
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
	meta := gardenerbackupbucket.GeneratedSecretObjectMeta(f.bucket())
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

func TestGeneratedCredentialIsIssuedOnceAndPublished(t *testing.T) {
	f := newGenFixture(t, true)
	// The plain test provider: the store's issuer for every name.
	f.actuator = NewActuator(controllertest.Provider{Store: f.mem, Issuer: f.mem.Issuer()}, f.client, f.client, f.recorder, corecontroller.DeletionOptions{})
	f.configure(&credentials.Settings{Issuer: "mem"})

	f.mustReconcile()
	s := f.expectPublished("cred-1", "mem")
	if string(s.Data[memstore.KeyBucket]) != genBucket || s.Annotations[annotationIssuedAt] == "" || s.Annotations[annotationPrevious] != "" {
		t.Fatalf("generated secret %v %v", s.Data, s.Annotations)
	}
	expectValid(t, f.mem, "cred-1")
	f.expectEvents("Normal " + ReasonCredentialPublished)
	// What is published reaches the bucket, and only it.
	view := f.mem.ForCredential(s.Data)
	if err := view.PutObject(f.ctx, genBucket, "shoot--a--b--1/x", []byte("x")); err != nil {
		t.Fatalf("the published credential does not reach its bucket: %v", err)
	}

	// Nothing to do: no credential, no write, no event.
	bb := f.bucket()
	f.mustReconcile()
	expectValid(t, f.mem, "cred-1")
	if again := f.mustSecret(); again.ResourceVersion != s.ResourceVersion {
		t.Fatalf("the secret was written again: %v", again.Annotations)
	}
	if again := f.bucket(); again.ResourceVersion != bb.ResourceVersion {
		t.Fatalf("the bucket was written again: %+v", again.Status)
	}
	f.expectEvents()
}

func TestGeneratedCredentialRotation(t *testing.T) {
	cases := []struct {
		name string
		r    *credentials.Rotation
		// rotate triggers the rotation (by request or by age).
		rotate func(f *genFixture, token string)
	}{
		{"on request", grace(time.Hour), func(f *genFixture, token string) { f.annotateBucket(AnnotationRotateCredentials, token) }},
		{"by period", &credentials.Rotation{Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}},
			func(f *genFixture, _ string) {
				f.setSecretAnnotation(annotationIssuedAt, time.Now().Add(-25*time.Hour).UTC().Format(time.RFC3339))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", c.r))
			f.mustReconcile()
			f.expectPublished("cred-1", "mem")
			f.events()
			// Not due yet: no rotation.
			f.mustReconcile()
			expectValid(t, f.mem, "cred-1")

			c.rotate(f, "1")
			f.mustReconcile()
			s := f.expectPublished("cred-2", "mem")
			if s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "mem" {
				t.Fatalf("the previous credential is not recorded: %v", s.Annotations)
			}
			if due := parseTime(s.Annotations[annotationRevokePrevious]); time.Until(due) < 59*time.Minute || time.Until(due) > time.Hour {
				t.Fatalf("revoke-previous-after %v; want in the grace period of 1h", due)
			}
			expectValid(t, f.mem, "cred-1", "cred-2") // the previous one stays valid in its grace period
			f.expectEvents("Normal " + ReasonCredentialPublished)
			if got := f.calls; !slices.Equal(got, []string{"mem issue [cred-1]"}) {
				t.Fatalf("issuer calls %q", got)
			}

			// Another rotation while the previous credential is in its grace period waits.
			c.rotate(f, "2")
			f.mustReconcile()
			f.expectPublished("cred-2", "mem")
			expectValid(t, f.mem, "cred-1", "cred-2")
			f.expectEvents("Warning " + ReasonRotationWaiting)

			// Grace over: the previous credential is revoked, then the waiting rotation follows.
			f.setSecretAnnotation(annotationRevokePrevious, past())
			f.mustReconcile()
			s = f.expectPublished("cred-3", "mem")
			if s.Annotations[annotationPrevious] != "cred-2" {
				t.Fatalf("annotations %v", s.Annotations)
			}
			expectValid(t, f.mem, "cred-2", "cred-3")
			f.expectEvents("Normal "+ReasonCredentialRevoked, "Normal "+ReasonCredentialPublished)
			if got := f.calls; !slices.Equal(got, []string{"mem revoke [cred-2]", "mem issue [cred-2]"}) {
				t.Fatalf("issuer calls %q", got)
			}
		})
	}
}

func TestGeneratedCredentialRotationWithoutGraceRevokesAtOnce(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", grace(0)))
	f.mustReconcile()
	f.annotateBucket(AnnotationRotateCredentials, "now")
	f.mustReconcile()
	s := f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-2")
	for _, k := range []string{annotationPrevious, annotationPreviousIssuer, annotationRevokePrevious} {
		if _, ok := s.Annotations[k]; ok {
			t.Fatalf("%s still recorded: %v", k, s.Annotations)
		}
	}
	if s.Annotations[annotationRotationHonoured] != "now" {
		t.Fatalf("the request is not recorded as honoured: %v", s.Annotations)
	}
	f.events()
	// The same request is honoured once.
	f.mustReconcile()
	f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-2")
	f.expectEvents()
}

// issuersAB is a fixture whose issuers "a" (over the bucket's store) and "b" (another identity
// service, its own store) issue independently.
func issuersAB(t *testing.T) (f *genFixture, b *memstore.Store) {
	f = newGenFixture(t, true)
	b = memstore.New(10)
	f.addIssuer("a", f.mem)
	f.addIssuer("b", b)
	return f, b
}

func TestGeneratedCredentialIssuerChange(t *testing.T) {
	for _, g := range []time.Duration{time.Hour, 0} {
		t.Run("grace "+g.String(), func(t *testing.T) {
			f, b := issuersAB(t)
			f.configure(settings("a", grace(g)))
			f.mustReconcile()
			f.expectPublished("cred-1", "a")
			f.configure(settings("b", grace(g)))
			f.mustReconcile()
			s := f.expectPublished("cred-1", "b") // b's first
			expectValid(t, b, "cred-1")
			if g > 0 {
				if s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "a" {
					t.Fatalf("a's credential is not recorded as the previous one: %v", s.Annotations)
				}
				expectValid(t, f.mem, "cred-1") // a's stays valid in its grace period
				if got := f.calls; !slices.Equal(got, []string{"b issue []"}) {
					t.Fatalf("issuer calls %q", got)
				}
				f.setSecretAnnotation(annotationRevokePrevious, past())
				f.mustReconcile()
				f.expectPublished("cred-1", "b")
			}
			// a's credential is revoked by a, b's is not touched.
			expectValid(t, f.mem)
			expectValid(t, b, "cred-1")
			for _, call := range f.calls {
				if strings.HasPrefix(call, "b revoke") {
					t.Fatalf("the new issuer revoked: %q", f.calls)
				}
			}
			if !slices.Contains(f.calls, "a revoke []") {
				t.Fatalf("a did not revoke its credential: %q", f.calls)
			}
			if s := f.mustSecret(); s.Annotations[annotationPrevious] != "" || s.Annotations[annotationPreviousIssuer] != "" {
				t.Fatalf("the revoked credential is still recorded: %v", s.Annotations)
			}
		})
	}
}

// A credential rotated within issuer a, whose configured issuer then becomes b: once its grace
// period is over, the previous credential (a's) is revoked by a, not by the configured b.
func TestGeneratedCredentialPreviousOfTheFormerIssuerIsRevokedByIt(t *testing.T) {
	f, b := issuersAB(t)
	f.configure(settings("a", grace(time.Hour)))
	f.mustReconcile()
	f.annotateBucket(AnnotationRotateCredentials, "1")
	f.mustReconcile()
	f.expectPublished("cred-2", "a")
	expectValid(t, f.mem, "cred-1", "cred-2")

	f.configure(settings("b", grace(time.Hour)))
	f.mustReconcile() // the issuer change waits for the previous credential's revocation
	f.expectPublished("cred-2", "a")
	f.events()
	f.setSecretAnnotation(annotationRevokePrevious, past())
	f.mustReconcile()
	s := f.expectPublished("cred-1", "b")
	if s.Annotations[annotationPrevious] != "cred-2" || s.Annotations[annotationPreviousIssuer] != "a" {
		t.Fatalf("annotations %v", s.Annotations)
	}
	// a's cred-1 is revoked (by a), a's cred-2 stays valid in its grace period.
	expectValid(t, f.mem, "cred-2")
	expectValid(t, b, "cred-1")
	if len(f.calls) == 0 || f.calls[0] != "a revoke [cred-2]" {
		t.Fatalf("issuer calls %q; want a to revoke its previous credential first", f.calls)
	}
}

func TestGeneratedCredentialPassThrough(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.mem.RefuseIssuing("no identity service")
		f.configure(&credentials.Settings{Issuer: "mem", Generation: credentials.Generation{AllowPassThrough: true}})
		f.mustReconcile()
		c := f.expectCondition(gardencorev1beta1.ConditionFalse, "PassThrough", false)
		if !strings.Contains(c.Message, "no identity service") {
			t.Fatalf("condition message %q does not say why", c.Message)
		}
		if s := f.secret(); s != nil {
			t.Fatalf("a generated secret was written: %v", s.Annotations)
		}
		f.expectEvents("Warning " + ReasonPassThrough)

		// Once the store issues, the credential is published.
		f.mem.RefuseIssuing("")
		f.mustReconcile()
		f.expectPublished("cred-1", "mem")
	})
	t.Run("not allowed", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.mem.RefuseIssuing("no identity service")
		f.configure(&credentials.Settings{Issuer: "mem"})
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), "allowPassThrough") {
			t.Fatalf("error %v; want ErrUnsupported naming allowPassThrough", err)
		}
		if f.secret() != nil || f.condition() != nil || f.bucket().Status.GeneratedSecretRef != nil {
			t.Fatal("something was published")
		}
	})
	t.Run("a store that stops issuing fails the rotation", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(&credentials.Settings{Issuer: "mem", Generation: credentials.Generation{AllowPassThrough: true}})
		f.mustReconcile()
		f.mem.RefuseIssuing("no identity service")
		f.annotateBucket(AnnotationRotateCredentials, "1")
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
		f.expectPublished("cred-1", "mem")
		expectValid(t, f.mem, "cred-1")
	})
}

func TestGeneratedCredentialsRetire(t *testing.T) {
	f, _ := issuersAB(t)
	f.configure(settings("a", grace(time.Hour)))
	f.mustReconcile()
	f.annotateBucket(AnnotationRotateCredentials, "1")
	f.mustReconcile() // a's cred-2 published, cred-1 in its grace period
	f.events()

	// Switched off: the reference stays (gardenlet never lets go of it) and the secret it names
	// holds the operator's credentials at once; the generated ones stay valid for the default
	// grace.
	f.configure(nil)
	f.mustReconcile()
	s := f.mustSecret()
	due := s.Annotations[AnnotationRetireAfter]
	if d := time.Until(parseTime(due)); d < credentials.DefaultGracePeriod-time.Minute || d > credentials.DefaultGracePeriod {
		t.Fatalf("retire-after %q; want in the default grace period", due)
	}
	expectOperatorCopy(t, s)
	c := f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)
	if !strings.Contains(c.Message, due) {
		t.Fatalf("condition message %q does not say when: %s", c.Message, due)
	}
	expectValid(t, f.mem, "cred-1", "cred-2")
	f.expectEvents("Normal " + ReasonRetiring)
	f.mustReconcile() // still retiring: nothing new
	f.expectEvents()
	if got := f.mustSecret().Annotations[AnnotationRetireAfter]; got != due {
		t.Fatalf("retire-after moved from %s to %s", due, got)
	}

	// Grace over: revoked by the issuer recorded (the config names none); the secret keeps the
	// operator's credentials under the reference, and records no generated credential any more.
	f.setSecretAnnotation(AnnotationRetireAfter, past())
	f.mustReconcile()
	expectValid(t, f.mem)
	if !slices.Equal(f.calls, []string{"a revoke []"}) {
		t.Fatalf("issuer calls %q", f.calls)
	}
	s = f.mustSecret()
	expectOperatorCopy(t, s)
	for _, key := range []string{AnnotationCredential, AnnotationIssuer, annotationPrevious, AnnotationRetireAfter} {
		if _, ok := s.Annotations[key]; ok {
			t.Fatalf("the retired secret still records %s: %v", key, s.Annotations)
		}
	}
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	f.expectEvents("Normal " + ReasonCredentialRevoked)

	// Nothing left to do.
	f.mustReconcile()
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	if len(f.calls) != 0 {
		t.Fatalf("issuer calls %q", f.calls)
	}

	// The operator rotates their secret: the copy follows at the next reconcile.
	operator := &corev1.Secret{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, operator); err != nil {
		t.Fatal(err)
	}
	operator.Data = map[string][]byte{"key": []byte("rotated")}
	if err := f.client.Update(f.ctx, operator); err != nil {
		t.Fatal(err)
	}
	f.mustReconcile()
	if got := string(f.mustSecret().Data["key"]); got != "rotated" {
		t.Fatalf("the copy holds %q after the operator's secret changed; want the new value", got)
	}
}

// expectOperatorCopy checks that the generated secret holds the operator's credentials.
func expectOperatorCopy(t *testing.T, s *corev1.Secret) {
	t.Helper()
	operator := map[string][]byte{"key": []byte("operator")}
	if s.Annotations[AnnotationOperatorCopy] == "" || len(s.Data) != len(operator) || string(s.Data["key"]) != string(operator["key"]) {
		t.Fatalf("the generated secret holds %d keys, annotations %v; want a copy of the operator's credentials", len(s.Data), s.Annotations)
	}
}

func TestGeneratedCredentialsSwitchedOnAgainBeforeRetirement(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", nil))
	f.mustReconcile()
	f.configure(nil)
	f.mustReconcile()
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)

	// The secret holds the operator's credentials by now, and the entries follow it: what was
	// generated is revoked and a new credential published under the same reference.
	f.configure(settings("mem", nil))
	f.mustReconcile()
	s := f.expectPublished("cred-2", "mem")
	for _, key := range []string{AnnotationRetireAfter, AnnotationOperatorCopy, annotationPrevious} {
		if _, ok := s.Annotations[key]; ok {
			t.Fatalf("%s is still recorded: %v", key, s.Annotations)
		}
	}
	expectValid(t, f.mem, "cred-2")
}

func TestGeneratedSecretWithoutIssuerGetsTheConfiguredOne(t *testing.T) {
	f := newGenFixture(t, true)
	cred, err := f.mem.Issuer().IssueCredential(f.ctx, genBucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := f.secretKey()
	old := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Annotations: map[string]string{
			AnnotationCredential: cred.ID, annotationIssuedAt: time.Now().UTC().Format(time.RFC3339),
		}},
		Data: cred.Data,
	}
	if err := f.client.Create(f.ctx, old); err != nil {
		t.Fatal(err)
	}
	f.configure(settings("mem", nil))
	f.mustReconcile()
	f.expectPublished(cred.ID, "mem")
	expectValid(t, f.mem, cred.ID)
	for _, call := range f.calls {
		if strings.Contains(call, "issue") {
			t.Fatalf("issuer calls %q; want the credential kept", f.calls)
		}
	}
}

func TestBucketDeletionRevokesGeneratedCredentials(t *testing.T) {
	t.Run("recorded, previous and unrecorded", func(t *testing.T) {
		f, b := issuersAB(t)
		f.configure(settings("a", grace(time.Hour)))
		f.mustReconcile()
		f.annotateBucket(AnnotationRotateCredentials, "1")
		f.mustReconcile() // a: cred-2 published, cred-1 previous
		// Switched to b, whose pass issued a credential but failed before recording it.
		f.configure(settings("b", grace(time.Hour)))
		if _, err := b.Issuer().IssueCredential(f.ctx, genBucket, nil); err != nil {
			t.Fatal(err)
		}
		expectValid(t, f.mem, "cred-1", "cred-2")
		expectValid(t, b, "cred-1")

		f.calls = nil
		if err := f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectValid(t, f.mem)
		expectValid(t, b)
		if f.secret() != nil {
			t.Fatal("the generated secret is still there")
		}
		if !slices.Equal(f.calls, []string{"a revoke []", "b revoke []"}) {
			t.Fatalf("issuer calls %q", f.calls)
		}
	})
	t.Run("issued but never published", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		if _, err := f.mem.Issuer().IssueCredential(f.ctx, genBucket, nil); err != nil {
			t.Fatal(err)
		}
		if err := f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectValid(t, f.mem)
	})
}

func TestGeneratedCredentialErrorCodes(t *testing.T) {
	wrap := func(sentinel error) error { return fmt.Errorf("identity service says no: %w", sentinel) }
	t.Run("credentials secret missing", func(t *testing.T) {
		f := newGenFixture(t, false)
		f.configure(settings("mem", nil))
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !errors.As(err, new(*corecontroller.MissingSecretError)) {
			t.Fatalf("error %v; want a MissingSecretError", err)
		}
	})
	t.Run("invalid providerConfig", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", &credentials.Rotation{Period: &metav1.Duration{Duration: time.Minute}}))
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !strings.Contains(err.Error(), "spec.providerConfig.generatedCredentials.rotation.period") {
			t.Fatalf("error %v; want the field path under spec.providerConfig", err)
		}
		if f.secret() != nil || len(f.mem.Valid(genBucket)) != 0 {
			t.Fatal("a credential was issued")
		}
	})
	t.Run("unknown issuer", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("nobody", nil))
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
	})
	t.Run("the issuer of the previous credential is gone", func(t *testing.T) {
		f, b := issuersAB(t)
		f.configure(settings("a", grace(time.Hour)))
		f.mustReconcile()
		f.configure(settings("b", grace(time.Hour)))
		f.mustReconcile()
		f.setSecretAnnotation(annotationRevokePrevious, past())
		delete(f.provider.issuers, "a")
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
		// Still recorded, so that it is revoked once a can be built again; nothing else happened.
		if s := f.expectPublished("cred-1", "b"); s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "a" {
			t.Fatalf("the previous credential is no longer recorded: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-1")
		expectValid(t, b, "cred-1")
		if len(f.calls) != 0 {
			t.Fatalf("issuer calls %q", f.calls)
		}
	})

	for _, c := range []struct {
		sentinel error
		code     gardencorev1beta1.ErrorCode
	}{
		{objectstore.ErrUnauthenticated, gardencorev1beta1.ErrorInfraUnauthenticated},
		{objectstore.ErrForbidden, gardencorev1beta1.ErrorInfraUnauthorized},
		{objectstore.ErrThrottled, gardencorev1beta1.ErrorInfraRateLimitsExceeded},
		{objectstore.ErrInvalidConfig, gardencorev1beta1.ErrorConfigurationProblem},
	} {
		t.Run("issuing: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.provider.issuers["mem"].issueErr = wrap(c.sentinel)
			err := f.reconcile()
			expectCode(t, err, c.code)
			if _, requeue := err.(*reconcilerutils.RequeueAfterError); requeue != (c.sentinel == objectstore.ErrThrottled) {
				t.Fatalf("error %T %v: requeue only when throttled", err, err)
			}
			if f.secret() != nil || f.condition() != nil || f.bucket().Status.GeneratedSecretRef != nil {
				t.Fatal("something was published")
			}
		})
		t.Run("revoking the previous: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", grace(time.Hour)))
			f.mustReconcile()
			f.annotateBucket(AnnotationRotateCredentials, "1")
			f.mustReconcile()
			f.setSecretAnnotation(annotationRevokePrevious, past())
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.reconcile(), c.code)
			// Still recorded, so that the next pass revokes it.
			if s := f.expectPublished("cred-2", "mem"); s.Annotations[annotationPrevious] != "cred-1" {
				t.Fatalf("the previous credential is no longer recorded: %v", s.Annotations)
			}
			expectValid(t, f.mem, "cred-1", "cred-2")
		})
		t.Run("revoking on retirement: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.mustReconcile()
			f.configure(nil)
			f.mustReconcile()
			f.setSecretAnnotation(AnnotationRetireAfter, past())
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.reconcile(), c.code)
			if f.secret() == nil {
				t.Fatal("the generated secret was deleted although its credential was not revoked")
			}
			expectValid(t, f.mem, "cred-1")
		})
		t.Run("revoking on deletion: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.mustReconcile()
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()), c.code)
			if f.secret() == nil {
				t.Fatal("the generated secret was deleted although its credential was not revoked")
			}
		})
	}
}
