// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package seedconfig_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	sharedcomponent "github.com/gardener/gardener/pkg/component/shared"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/seedconfig"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

var (
	restConfig *rest.Config
	k8s        client.Client
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		crds, err := stack.GardenerCRDs()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		env := &envtest.Environment{BinaryAssetsDirectory: assets, CRDInstallOptions: envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}}
		restConfig, err = env.Start()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = env.Stop() }()
		scheme, _ := app.Scheme()
		k8s, err = client.New(restConfig, client.Options{Scheme: scheme})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctx := context.Background()
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: seedconfig.Namespace}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: seedconfig.Namespace, Name: "backup-credentials"}, Data: map[string][]byte{"key": []byte("value")}},
		} {
			if err := k8s.Create(ctx, o); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return m.Run()
	}())
}

// reconciled is one BackupBucket reconcile's management plane: the config it was built with.
type reconciled struct {
	cfg *awsapi.BackupBucketConfig
	at  time.Time
}

// awsOverMem is aws's real decoding (field paths, incumbent fields) over an in-memory store; it
// reports every management plane it builds, which a BackupBucket reconcile builds first.
type awsOverMem struct {
	store *memstore.Store
	seen  chan reconciled
}

func (awsOverMem) Type() string                    { return awsapi.Type }
func (awsOverMem) ValidateBucketName(string) error { return nil }
func (awsOverMem) Decode(raw []byte) (*awsapi.BackupBucketConfig, error) {
	return awsapi.DecodeBackupBucketConfig(raw)
}
func (c awsOverMem) NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error) {
	return c.store, nil
}
func (c awsOverMem) NewManagement(_ context.Context, _ provider.Credentials, cfg *awsapi.BackupBucketConfig) (objectstore.Management, error) {
	c.seen <- reconciled{cfg: cfg, at: time.Now()}
	return c.store, nil
}
func (awsOverMem) NewIssuer(context.Context, provider.Credentials, *awsapi.BackupBucketConfig, string) (objectstore.CredentialIssuer, error) {
	return nil, nil
}
func (awsOverMem) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return data, nil
}
func (awsOverMem) Flags() provider.Flags { return nil }

// seed is one binary: the Extension and BackupBucket controllers over one Seeded.
type seed struct {
	seeded *provider.Seeded
	seen   chan reconciled
}

// start runs the Extension and BackupBucket controllers as the binary does (pkg/app) until the
// test ends.
func start(t *testing.T, defaults string, declared bool) *seed {
	t.Helper()
	s := &seed{seen: make(chan reconciled, 100)}
	var err error
	s.seeded, err = provider.WithSeedConfig(provider.Register[*awsapi.BackupBucketConfig](awsOverMem{store: memstore.New(10), seen: s.seen}), []byte(defaults), awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := app.Scheme()
	mgr, err := manager.New(restConfig, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctrl := controller.Options{SkipNameValidation: new(true)}
	if err := seedconfig.AddToManager(ctx, mgr, s.seeded, seedconfig.Options{Declared: declared, Controller: ctrl}); err != nil {
		t.Fatal(err)
	}
	if err := backupbucket.AddToManager(ctx, mgr, s.seeded, options.AddOptions{Controller: ctrl, Deletion: options.DeletionOptions{Parallelism: 1}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

const ours = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

func freshnessConfig(age string) string {
	return ours + `,"backupFreshness":{"fullSnapshotMaxAge":"` + age + `"}}`
}

// fullAge is the fullSnapshotMaxAge a reconcile's config had ("" for none).
func fullAge(cfg *awsapi.BackupBucketConfig) string {
	if s := cfg.FreshnessSettings(); s != nil && s.FullSnapshotMaxAge != nil {
		return s.FullSnapshotMaxAge.Duration.String()
	}
	return ""
}

// waitReconcile waits for a reconcile of bucket whose config has fullSnapshotMaxAge want.
func (s *seed) waitReconcile(t *testing.T, want string) reconciled {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case r := <-s.seen:
			if fullAge(r.cfg) == want {
				return r
			}
		case <-timeout:
			t.Fatalf("no BackupBucket reconcile with fullSnapshotMaxAge %q within a minute", want)
		}
	}
}

// noReconcile fails if a management plane is built within d.
func (s *seed) noReconcile(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case r := <-s.seen:
		t.Fatalf("a BackupBucket reconcile built a management plane with %+v", r.cfg)
	case <-time.After(d):
	}
}

func createBucket(t *testing.T, name string) {
	t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: awsapi.Type},
			Region:      "eu-central-1",
			SecretRef:   corev1.SecretReference{Namespace: seedconfig.Namespace, Name: "backup-credentials"},
		},
	}
	if err := k8s.Create(context.Background(), bb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Without the controllers (stopped first), the finalizer is removed by hand.
		_ = k8s.Get(context.Background(), client.ObjectKeyFromObject(bb), bb)
		bb.Finalizers = nil
		_ = k8s.Update(context.Background(), bb)
		_ = k8s.Delete(context.Background(), bb)
	})
}

// writeExtension creates or updates the seed's Extension as gardenlet does (the operation
// annotation reconcile), with providerConfig raw ("": none).
func writeExtension(t *testing.T, raw string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return tryWriteExtension(raw) }); err != nil {
		t.Fatal(err)
	}
}

func tryWriteExtension(raw string) error {
	ctx := context.Background()
	ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: seedconfig.Namespace, Name: "backup-aws"}}
	err := k8s.Get(ctx, client.ObjectKeyFromObject(ex), ex)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	metav1.SetMetaDataAnnotation(&ex.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationReconcile)
	ex.Spec.Type = "backup-aws"
	ex.Spec.Class = new(extensionsv1alpha1.ExtensionClassSeed)
	ex.Spec.ProviderConfig = nil
	if raw != "" {
		ex.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(raw)}
	}
	if apierrors.IsNotFound(err) {
		return k8s.Create(ctx, ex)
	}
	return k8s.Update(ctx, ex)
}

// removeExtension deletes the seed's Extension (as gardenlet does when the Seed no longer
// declares it) and waits until it is gone.
func removeExtension(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: seedconfig.Namespace, Name: "backup-aws"}}
	if err := k8s.Delete(ctx, ex); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ex), ex); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Extension is still there (%v), finalizers %v", err, ex.Finalizers)
		}
		return nil
	})
}

// extensionOperation waits until the Extension's last operation of generation is in state and
// returns the Extension.
func extensionOperation(t *testing.T, state gardencorev1beta1.LastOperationState) *extensionsv1alpha1.Extension {
	t.Helper()
	ex := &extensionsv1alpha1.Extension{}
	eventually(t, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: seedconfig.Namespace, Name: "backup-aws"}, ex); err != nil {
			return err
		}
		op := ex.Status.LastOperation
		if op == nil || op.State != state || ex.Status.ObservedGeneration != ex.Generation {
			return fmt.Errorf("last operation %+v of generation %d; want %s of generation %d", op, ex.Status.ObservedGeneration, state, ex.Generation)
		}
		return nil
	})
	return ex
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExtensionChangesApplyLive: a seed that declares no Extension reconciles its BackupBucket
// with the defaults; each change of the Extension reaches the next BackupBucket reconcile without
// a restart (the time from the change to that reconcile is logged: the measurement of
// docs/migrating.md); a bad change is refused with its field path and ERR_CONFIGURATION_PROBLEM
// while the last valid configuration stays in force; removing the Extension restores the
// defaults.
func TestExtensionChangesApplyLive(t *testing.T) {
	s := start(t, "", false)
	createBucket(t, "live-bucket")
	s.waitReconcile(t, "") // no Extension, not declared: the defaults
	// No BackupEntry controller runs here: the entry keeps the operation annotation it is asked
	// to reconcile with.
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--live--uid"},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: awsapi.Type},
			BucketName:  "live-bucket",
			Region:      "eu-central-1",
			SecretRef:   corev1.SecretReference{Namespace: seedconfig.Namespace, Name: "backup-credentials"},
		},
	}
	if err := k8s.Create(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), be) })

	for i, age := range []string{"49h0m0s", "50h0m0s", "51h0m0s", "52h0m0s", "53h0m0s"} {
		changed := time.Now()
		writeExtension(t, freshnessConfig(age))
		r := s.waitReconcile(t, age)
		t.Logf("change %d: Extension written -> BackupBucket reconciled with it: %v", i+1, r.at.Sub(changed))
		ex := extensionOperation(t, gardencorev1beta1.LastOperationStateSucceeded)
		if ex.Status.ProviderStatus == nil || !strings.Contains(string(ex.Status.ProviderStatus.Raw), age[:3]) {
			t.Fatalf("status.providerStatus %v; want the applied configuration", ex.Status.ProviderStatus)
		}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(be), be); err != nil {
			t.Fatal(err)
		}
		if be.Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.GardenerOperationReconcile {
			t.Fatalf("BackupEntry annotations %v after change %d; want it asked to reconcile with the new configuration", be.Annotations, i+1)
		}
		delete(be.Annotations, v1beta1constants.GardenerOperation)
		if err := k8s.Update(context.Background(), be); err != nil {
			t.Fatal(err)
		}
	}

	writeExtension(t, ours+`,"handback":true}`)
	ex := extensionOperation(t, gardencorev1beta1.LastOperationStateError)
	if ex.Status.LastError == nil || !strings.Contains(ex.Status.LastError.Description, `spec.providerConfig: Invalid value: unknown field "handback"`) ||
		!strings.Contains(ex.Status.LastError.Description, "the configuration applied before stays in force") ||
		len(ex.Status.LastError.Codes) != 1 || ex.Status.LastError.Codes[0] != gardencorev1beta1.ErrorConfigurationProblem {
		t.Fatalf("lastError %+v; want the field path, what stays in force and ERR_CONFIGURATION_PROBLEM", ex.Status.LastError)
	}
	if cfg, err := s.seeded.Decode(nil); err != nil || fullAge(cfg.ProviderConfig.(*awsapi.BackupBucketConfig)) != "53h0m0s" {
		t.Fatalf("after a refused change: %+v, %v; want the last valid configuration in force", cfg.ProviderConfig, err)
	}

	removeExtension(t)
	s.waitReconcile(t, "")
	if raw, err := s.seeded.InForce(); err != nil || len(raw) > 0 {
		t.Fatalf("after the Extension's removal: %q, %v; want the defaults (none)", raw, err)
	}
}

// TestDeclaredWaits: on a seed that declares the Extension, a BackupBucket reconciled before the
// Extension exists builds nothing (no management plane, no issuer, no data plane) and says why in
// its last operation with a retryable code; once the Extension is applied it reconciles with it.
func TestDeclaredWaits(t *testing.T) {
	s := start(t, "", true)
	createBucket(t, "waiting-bucket")
	bb := &extensionsv1alpha1.BackupBucket{}
	eventually(t, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: "waiting-bucket"}, bb); err != nil {
			return err
		}
		if e := bb.Status.LastError; e == nil || !strings.Contains(e.Description, "waiting for this seed's configuration") ||
			len(e.Codes) != 1 || e.Codes[0] != gardencorev1beta1.ErrorRetryableConfigurationProblem {
			return fmt.Errorf("lastError %+v; want the wait, ERR_RETRYABLE_CONFIGURATION_PROBLEM", e)
		}
		return nil
	})
	s.noReconcile(t, 2*time.Second)

	writeExtension(t, freshnessConfig("49h"))
	s.waitReconcile(t, "49h0m0s")
	extensionOperation(t, gardencorev1beta1.LastOperationStateSucceeded)
	removeExtension(t)
}

// TestAnExistingExtensionIsAwaited: a binary that starts where the Extension exists waits for it
// to be applied although the chart did not say the seed declares it.
func TestAnExistingExtensionIsAwaited(t *testing.T) {
	writeExtension(t, freshnessConfig("49h"))
	t.Cleanup(func() { removeExtension(t) })
	seeded, err := provider.WithSeedConfig(provider.Register[*awsapi.BackupBucketConfig](awsOverMem{}), nil, awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := app.Scheme()
	mgr, err := manager.New(restConfig, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := seedconfig.AddToManager(context.Background(), mgr, seeded, seedconfig.Options{Controller: controller.Options{SkipNameValidation: new(true)}}); err != nil {
		t.Fatal(err)
	}
	var pending *provider.SeedConfigPendingError
	if _, err := seeded.InForce(); !errorsAs(err, &pending) {
		t.Fatalf("InForce before the start: %v; want the wait", err)
	}
}

// TestRestartWithARefusedChange: a binary that starts while the Extension holds a refused change
// puts the configuration last applied (status.providerStatus) in force, so backups go on, and the
// Extension says so.
func TestRestartWithARefusedChange(t *testing.T) {
	writeExtension(t, ours+`,"handback":true}`)
	ex := &extensionsv1alpha1.Extension{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: seedconfig.Namespace, Name: "backup-aws"}, ex); err != nil {
		t.Fatal(err)
	}
	ex.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(freshnessConfig("49h"))}
	if err := k8s.Status().Update(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	s := start(t, "", true)
	createBucket(t, "restarted-bucket")
	s.waitReconcile(t, "49h0m0s")
	ex = extensionOperation(t, gardencorev1beta1.LastOperationStateError)
	// The first reconcile puts status.providerStatus in force; a retry then finds it applied before.
	if d := ex.Status.LastError.Description; !strings.Contains(d, `unknown field "handback"`) ||
		(!strings.Contains(d, "the configuration last applied (status.providerStatus) is in force") && !strings.Contains(d, "the configuration applied before stays in force")) {
		t.Fatalf("lastError %+v", ex.Status.LastError)
	}
	writeExtension(t, "")
	extensionOperation(t, gardencorev1beta1.LastOperationStateSucceeded)
	removeExtension(t)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// TestGitOpsThroughGardenersExtensionComponent: gardener's own code that turns a Seed's
// spec.extensions into Extensions (gardener v1.150.0 pkg/component/shared NewExtension,
// mergeExtensions, with the seed flow's Deploy, Wait, DeleteStaleResources and
// WaitCleanupStaleResources), given this extension's generated ControllerRegistration, writes the
// seed's Extension that this controller applies; removing the entry from the Seed removes the
// Extension and the setting with it.
func TestGitOpsThroughGardenersExtensionComponent(t *testing.T) {
	s := start(t, "", true)
	createBucket(t, "gitops-bucket")
	ctx := context.Background()
	gardenScheme := runtime.NewScheme()
	if err := gardencorev1beta1.AddToScheme(gardenScheme); err != nil {
		t.Fatal(err)
	}
	examples, err := charts.Examples(awsapi.Type)
	if err != nil {
		t.Fatal(err)
	}
	var registration *gardencorev1beta1.ControllerRegistration
	for _, doc := range strings.Split(string(examples["controller-registration.yaml"]), "\n---\n") {
		r := &gardencorev1beta1.ControllerRegistration{}
		if err := yaml.Unmarshal([]byte(doc), r); err == nil && r.Kind == "ControllerRegistration" {
			registration = r
		}
	}
	if registration == nil {
		t.Fatal("example/aws/controller-registration.yaml holds no ControllerRegistration")
	}
	garden := fakeclient.NewClientBuilder().WithScheme(gardenScheme).WithObjects(registration).Build()
	seedFlow := func(exts []gardencorev1beta1.Extension) {
		t.Helper()
		c, err := sharedcomponent.NewExtension(ctx, logr.Discard(), garden, k8s, seedconfig.Namespace, extensionsv1alpha1.ExtensionClassSeed, exts, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []func(context.Context) error{c.Deploy, c.Wait, c.DeleteStaleResources, c.WaitCleanupStaleResources} {
			if err := step(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	seedFlow([]gardencorev1beta1.Extension{{Type: "backup-aws", ProviderConfig: &runtime.RawExtension{Raw: []byte(freshnessConfig("49h"))}}})
	s.waitReconcile(t, "49h0m0s")

	seedFlow(nil) // the entry removed from the Seed (in Git)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: seedconfig.Namespace, Name: "backup-aws"}, &extensionsv1alpha1.Extension{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Extension after the entry's removal: %v; want it gone", err)
	}
	s.waitReconcile(t, "")
	if raw, err := s.seeded.InForce(); err != nil || len(raw) > 0 {
		t.Fatalf("after the entry's removal: %q, %v; want the defaults (none)", raw, err)
	}
}

// TestDefaultsUnderTheExtension: the landscape's defaults (--seed-config-defaults) apply under the
// seed's Extension: a top-level field the Extension sets replaces the default's, the others stay.
func TestDefaultsUnderTheExtension(t *testing.T) {
	s := start(t, ours+`,"disabledSettings":["TLSOnlyPolicy"]}`, false)
	createBucket(t, "defaults-bucket")
	if r := s.waitReconcile(t, ""); !r.cfg.Disabled(awsapi.SettingTLSOnlyPolicy) {
		t.Fatalf("without an Extension: %+v; want the defaults", r.cfg)
	}
	writeExtension(t, freshnessConfig("49h"))
	if r := s.waitReconcile(t, "49h0m0s"); !r.cfg.Disabled(awsapi.SettingTLSOnlyPolicy) {
		t.Fatalf("the Extension's backupFreshness over the defaults: %+v; want the defaults' disabledSettings too", r.cfg)
	}
	writeExtension(t, ours+`,"backupFreshness":{"fullSnapshotMaxAge":"50h"},"disabledSettings":["PublicAccessBlock"]}`)
	if r := s.waitReconcile(t, "50h0m0s"); r.cfg.Disabled(awsapi.SettingTLSOnlyPolicy) || !r.cfg.Disabled(awsapi.SettingPublicAccessBlock) {
		t.Fatalf("the Extension's disabledSettings: %+v; want them to replace the defaults'", r.cfg)
	}
	removeExtension(t)
}
