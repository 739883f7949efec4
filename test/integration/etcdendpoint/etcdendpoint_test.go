// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package etcdendpoint_test runs the Etcd endpoint webhook (pkg/etcdendpoint) on a real
// kube-apiserver (envtest) with etcd-druid's Etcd CRD, served with its self-signed certificate and
// registered by the webhook's own registration, beside a second webhook that sets the same field
// as provider-gcp's seedprovider does, registered before and after it.
package etcdendpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	druidcrds "github.com/gardener/etcd-druid/api/core/v1alpha1/crds"
	extensionswebhook "github.com/gardener/gardener/extensions/pkg/webhook"
	"github.com/gardener/gardener/extensions/pkg/webhook/certificates"
	extensionscmdwebhook "github.com/gardener/gardener/extensions/pkg/webhook/cmd"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"gomodules.xyz/jsonpatch/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const (
	namespace = "shoot--dev--endpoint"
	bucket    = "bucket-endpoint"
	ours      = "https://minio.example.com:9000"
	theirs    = "https://storage.me-central2.rep.googleapis.com"
)

var (
	cfg *rest.Config
	k8s client.Client
)

func TestMain(m *testing.M) {
	env, c, err := stack.StartEnvtest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg = c
	code := 1
	if err := setUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = env.Stop()
	os.Exit(code)
}

// setUp installs etcd-druid's own Etcd CRD (the CEL variant, as for Kubernetes >= 1.29).
func setUp() error {
	all, err := druidcrds.GetAll("1.36")
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := sigsyaml.Unmarshal([]byte(all[druidcrds.ResourceNameEtcd]), crd); err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		return fmt.Errorf("installing the Etcd CRD: %w", err)
	}
	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	// A shoot namespace of this seed whose backup provider is aws, and its BackupBucket.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"backup.gardener.cloud/provider": "aws"}}},
		&extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucket}, Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"}, Region: "eu-1",
			SecretRef: corev1.SecretReference{Name: "backup-credentials", Namespace: "garden"},
		}},
	} {
		if err := k8s.Create(context.Background(), o); err != nil {
			return err
		}
	}
	return nil
}

// startOurs runs the webhook of the aws binary in a manager as pkg/app does (registration in url
// mode, self-signed certificates), until the returned stop is called.
func startOurs(t *testing.T) (stop func()) {
	t.Helper()
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := app.Scheme()
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:        scheme,
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: t.TempDir()}),
		Client:        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	setSecretEndpoint(t, ours)
	ctx, cancel := context.WithCancel(context.Background())
	p := provider.Register(&aws.Provider{})
	if err := etcdendpoint.AddToManager(ctx, mgr, p, etcdendpoint.Options{Server: extensionscmdwebhook.ServerConfig{Mode: extensionswebhook.ModeURL, URL: fmt.Sprintf("127.0.0.1:%d", port)}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// Registered and served: a dry-run Etcd comes back with the endpoint.
	var last error
	defer func() {
		if t.Failed() {
			t.Logf("last answer: %v", last)
		}
	}()
	waitFor(t, "the webhook to be registered and served", func() bool {
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		if last = k8s.Get(ctx, client.ObjectKey{Name: etcdendpoint.ConfigName("aws")}, &cfg); last != nil {
			return false
		}
		e := newEtcd("probe")
		if last = k8s.Create(ctx, e, client.DryRunAll); last != nil {
			return false
		}
		last = fmt.Errorf("endpoint %s", endpointOf(e))
		return e.Spec.Backup.Store.EndpointOverride != nil
	})
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

// theirBehaviour is what the stand-in of provider-gcp's webhook does with the field, the three
// things its EnsureETCD does (provider-gcp v1.53.4 pkg/webhook/seedprovider/ensurer.go:61-79):
// nothing (the bucket's providerConfig has no store), a value (store.endpointOverride), or nil
// (a store without endpointOverride).
type theirBehaviour int

const (
	leave theirBehaviour = iota
	set
	unset
)

func (b theirBehaviour) String() string {
	return [...]string{"leaves it", "sets its own", "clears it"}[b]
}

// standIn is provider-gcp's seedprovider webhook as far as the field goes: a webhook of its own
// (its own server and certificate), registered as gardener's library registers it
// (failurePolicy Fail, no reinvocation) under a configuration name that puts it before or after
// this extension's.
type standIn struct {
	mu        sync.Mutex
	behaviour theirBehaviour
	// calls counts the calls by the configuration that made them.
	calls map[string]int
}

// as is the stand-in's handler for the configuration named config.
func (s *standIn) as(config string) admission.Handler {
	return admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		s.mu.Lock()
		s.calls[config]++
		s.mu.Unlock()
		return s.handle(req)
	})
}

func (s *standIn) handle(req admission.Request) admission.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &druidcorev1alpha1.Etcd{}
	if err := json.Unmarshal(req.Object.Raw, e); err != nil || e.Spec.Backup.Store == nil {
		return admission.Allowed("")
	}
	switch s.behaviour {
	case set:
		return admission.Patched("", jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/backup/store/endpointOverride", Value: theirs})
	case unset:
		if e.Spec.Backup.Store.EndpointOverride != nil {
			return admission.Patched("", jsonpatch.JsonPatchOperation{Operation: "remove", Path: "/spec/backup/store/endpointOverride"})
		}
	}
	return admission.Allowed("")
}

func (s *standIn) set(b theirBehaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviour = b
}

func (s *standIn) callCount(config string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[config]
}

// startStandIn serves s for each configuration name at its own path and returns their client
// configs.
func startStandIn(t *testing.T, s *standIn, configs ...string) map[string]admissionregistrationv1.WebhookClientConfig {
	t.Helper()
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	url := fmt.Sprintf("127.0.0.1:%d", port)
	ca, err := certificates.GenerateUnmanagedCertificates("provider-gcp-stand-in", false, dir, extensionswebhook.ModeURL, url)
	if err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	out := map[string]admissionregistrationv1.WebhookClientConfig{}
	for _, c := range configs {
		srv.Register("/"+c, &webhook.Admission{Handler: s.as(c)})
		out[c] = admissionregistrationv1.WebhookClientConfig{URL: new("https://" + url + "/" + c), CABundle: ca}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = srv.Start(ctx) }()
	waitFor(t, "the stand-in to serve", func() bool { return srv.StartedChecker()(&http.Request{}) == nil })
	return out
}

// registerStandIn registers the stand-in under name, waits until kube-apiserver calls it, and
// on cleanup deletes it and waits until kube-apiserver no longer does.
func registerStandIn(t *testing.T, s *standIn, name string, cc admissionregistrationv1.WebhookClientConfig) {
	t.Helper()
	ctx := context.Background()
	called := func() bool {
		before := s.callCount(name)
		_ = k8s.Create(ctx, newEtcd("probe"), client.DryRunAll)
		return s.callCount(name) > before
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "seedprovider.provider-gcp.extensions.gardener.cloud",
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"druid.gardener.cloud"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"etcds"}},
			}},
			FailurePolicy: new(admissionregistrationv1.Fail),
			SideEffects:   new(admissionregistrationv1.SideEffectClassNone),
			// gardener's library sets none, so kube-apiserver's default, Never, applies.
		}},
	}
	if err := k8s.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, name+" to be called", called)
	t.Cleanup(func() {
		if err := k8s.Delete(ctx, cfg); err != nil {
			t.Error(err)
		}
		waitFor(t, name+" to be no longer called", func() bool { return !called() })
	})
}

func newEtcd(name string) *druidcorev1alpha1.Etcd {
	return &druidcorev1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: druidcorev1alpha1.EtcdSpec{
			Replicas: 1,
			Labels:   map[string]string{"app": "etcd-statefulset"},
			Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{
				Container: new(bucket),
				Prefix:    "shoot--dev--endpoint--uid/etcd-main",
				Provider:  new(druidcorev1alpha1.StorageProvider("aws")),
				SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
			}},
		},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func endpointOf(e *druidcorev1alpha1.Etcd) string {
	if e.Spec.Backup.Store.EndpointOverride == nil {
		return "<none>"
	}
	return *e.Spec.Backup.Store.EndpointOverride
}

// setSecretEndpoint writes the shoot's etcd-backup secret, with or without the endpoint.
func setSecretEndpoint(t *testing.T, endpoint string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: namespace}}
	data := map[string][]byte{"accessKeyID": []byte("AKIA"), "secretAccessKey": []byte("s3cr3t"), "region": []byte("eu-1"), "bucketName": []byte(bucket)}
	if endpoint != "" {
		data["endpoint"] = []byte(endpoint)
	}
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		s.Data = data
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return
	}
	s.Data = data
	if err := k8s.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// TestOrderWithProviderGCPsWebhook: whichever of the two webhooks kube-apiserver calls first, the
// Etcd ends with this extension's endpoint where its etcd-backup secret names one, and with what
// the other webhook left where it names none; a second write of the same Etcd changes nothing
// (its generation stays); gardenlet's merge patch that drops the field gets it back.
func TestOrderWithProviderGCPsWebhook(t *testing.T) {
	ctx := context.Background()
	stop := startOurs(t)
	defer stop()

	s := &standIn{calls: map[string]int{}}
	// "gardener-extension-a-..." sorts before "gardener-extension-backup-aws", provider-gcp's own
	// name "gardener-extension-provider-gcp" after it.
	configs := []string{"gardener-extension-a-provider-gcp", "gardener-extension-provider-gcp"}
	cc := startStandIn(t, s, configs...)
	for _, standInConfig := range configs {
		t.Run("stand-in registered as "+standInConfig, func(t *testing.T) {
			registerStandIn(t, s, standInConfig, cc[standInConfig])
			for _, secretEndpoint := range []string{ours, ""} {
				setSecretEndpoint(t, secretEndpoint)
				for _, b := range []theirBehaviour{leave, set, unset} {
					want := secretEndpoint
					if want == "" {
						want = map[theirBehaviour]string{leave: "<none>", set: theirs, unset: "<none>"}[b]
					}
					name := fmt.Sprintf("secret endpoint %q, the other webhook %s", secretEndpoint, b)
					t.Run(name, func(t *testing.T) {
						s.set(b)
						before := s.callCount(standInConfig)
						e := newEtcd(fmt.Sprintf("etcd-%d", time.Now().UnixNano()))
						if err := k8s.Create(ctx, e); err != nil {
							t.Fatal(err)
						}
						defer func() { _ = k8s.Delete(ctx, e) }()
						if s.callCount(standInConfig) == before {
							t.Fatal("the stand-in was not called: the test would prove nothing")
						}
						if got := endpointOf(e); got != want {
							t.Fatalf("created with endpoint %s; want %s", got, want)
						}

						// The same Etcd written again: nothing changes, no rollout.
						gen := e.Generation
						e.Labels = map[string]string{"touched": "yes"}
						if err := k8s.Update(ctx, e); err != nil {
							t.Fatal(err)
						}
						if got := endpointOf(e); got != want || e.Generation != gen {
							t.Fatalf("after an update: endpoint %s, generation %d; want %s, %d", got, e.Generation, want, gen)
						}

						// gardenlet's GetAndCreateOrMergePatch drops the field it does not set.
						patch := []byte(`{"spec":{"backup":{"store":{"endpointOverride":null}}},"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}}}`)
						if err := k8s.Patch(ctx, e, client.RawPatch(types.MergePatchType, patch)); err != nil {
							t.Fatal(err)
						}
						if got := endpointOf(e); got != want || e.Generation != gen {
							t.Fatalf("after gardenlet's merge patch: endpoint %s, generation %d; want %s, %d", got, e.Generation, want, gen)
						}
					})
				}
			}
		})
	}
}

// TestNotOurs: an Etcd in a namespace of another backup provider, and one whose container is a
// BackupBucket of another type, are left as written.
func TestNotOurs(t *testing.T) {
	ctx := context.Background()
	stop := startOurs(t)
	defer stop()
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shoot--dev--other", Labels: map[string]string{"backup.gardener.cloud/provider": "gcp"}}}
	gcpBucket := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket-gcp"}, Spec: extensionsv1alpha1.BackupBucketSpec{
		DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "gcp"}, Region: "eu-1", SecretRef: corev1.SecretReference{Name: "x", Namespace: "garden"},
	}}
	for _, o := range []client.Object{other, gcpBucket} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []*druidcorev1alpha1.Etcd{newEtcd("other-namespace"), newEtcd("other-bucket")} {
		if e.Name == "other-namespace" {
			e.Namespace = other.Name
		} else {
			e.Spec.Backup.Store.Container = new(gcpBucket.Name)
		}
		if err := k8s.Create(ctx, e, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got := endpointOf(e); got != "<none>" {
			t.Errorf("%s: endpoint %s; want none", e.Name, got)
		}
	}
}

// TestFailurePolicy: with the webhook's server gone, an Etcd in a namespace it selects is refused
// (failurePolicy Fail), not admitted without its endpoint.
func TestFailurePolicy(t *testing.T) {
	ctx := context.Background()
	stop := startOurs(t)
	stop()
	err := k8s.Create(ctx, newEtcd("while-down"), client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "etcd-store-endpoint") {
		t.Fatalf("created while the webhook was down: %v; want a refusal naming the webhook", err)
	}
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	if err := k8s.Get(ctx, client.ObjectKey{Name: etcdendpoint.ConfigName("aws")}, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	wh := cfg.Webhooks[0]
	if *wh.FailurePolicy != admissionregistrationv1.Fail || wh.ReinvocationPolicy == nil || *wh.ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy {
		t.Fatalf("registered with failurePolicy %v, reinvocationPolicy %v", *wh.FailurePolicy, wh.ReinvocationPolicy)
	}
}
