// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package admission_test runs the admission against gardener's own apiserver (gardener v1.150.0,
// in-process through gardener's test environment) with its ExtensionLabels admission plugin on:
// the plugin labels the BackupBuckets, and the webhooks the admission registers (url form, its
// CA from gardener's secrets manager) are called by gardener-apiserver for this extension's types
// only.
package admission_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/gardener/gardener/pkg/client/kubernetes"
	gardenerenvtest "github.com/gardener/gardener/test/envtest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func TestAdmissionBehindGardenerAPIServer(t *testing.T) {
	assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		t.Fatal(err)
	}
	env := &gardenerenvtest.GardenerTestEnvironment{
		Environment: &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStopTimeout: time.Minute},
		GardenerAPIServer: &gardenerenvtest.GardenerAPIServer{
			// ExtensionLabels stays on: it is what the webhooks' selectors read.
			Args:        []string{"--disable-admission-plugins=DeletionConfirmation,ExtensionValidator,ResourceReferenceManager", "--log-level=error"},
			StopTimeout: time.Minute,
		},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting gardener-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	garden, err := client.New(cfg, client.Options{Scheme: kubernetes.GardenScheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := garden.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["garden"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["garden"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["garden"] = &clientcmdapi.Context{Cluster: "garden", AuthInfo: "garden"}
	kc.CurrentContext = "garden"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		cmd := admission.NewCommand(admission.Validator{APIs: all.APIs()})
		cmd.SetArgs([]string{
			"--kubeconfig=" + kubeconfig, "--leader-election=false", "--metrics-bind-address=0", "--health-bind-address=0",
			"--webhook-config-server-host=127.0.0.1", fmt.Sprintf("--webhook-config-server-port=%d", port), "--webhook-config-cert-dir=" + filepath.Join(dir, "certs"),
			"--webhook-config-mode=url", fmt.Sprintf("--webhook-config-url=127.0.0.1:%d", port), "--webhook-config-namespace=garden",
		})
		exited <- cmd.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil {
			t.Errorf("the admission ended with %v", err)
		}
	})
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := garden.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err == nil && len(vwc.Webhooks) > 0 && len(vwc.Webhooks[0].ClientConfig.CABundle) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook configuration with a CA bundle")
		}
	}
	if err := garden.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "garden"}}); err != nil {
		t.Fatal(err)
	}
	bucket := func(name, typ, config string) *gardencorev1beta1.BackupBucket {
		return &gardencorev1beta1.BackupBucket{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gardencorev1beta1.BackupBucketSpec{
				Provider:       gardencorev1beta1.BackupBucketProvider{Type: typ, Region: "eu-1"},
				ProviderConfig: &runtime.RawExtension{Raw: []byte(config)},
				CredentialsRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "garden", Name: "backup"},
				SeedName:       new("seed-a"),
			},
		}
	}
	const bad = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","encryptionn":{}}`

	// An aws bucket is labelled by gardener-apiserver, sent to the admission and refused with its
	// field; the webhook's server is reached through the URL and trusted through the CA bundle.
	err = garden.Create(ctx, bucket("bad-aws", "aws", bad))
	if err == nil || !strings.Contains(err.Error(), "encryptionn") || !strings.Contains(err.Error(), admission.Name) {
		t.Fatalf("an aws bucket with an unknown field: %v; want the admission's refusal", err)
	}
	good := bucket("good-aws", "aws", `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`)
	if err := garden.Create(ctx, good); err != nil {
		t.Fatalf("a valid aws bucket: %v", err)
	}
	if good.Labels["provider.extensions.gardener.cloud/aws"] != "true" {
		t.Errorf("labels %v; want gardener-apiserver's provider.extensions.gardener.cloud/aws", good.Labels)
	}

	// A bucket of a type this extension does not serve, even one claiming an aws label, is labelled
	// by its own type only and never reaches the admission: the same content is admitted.
	other := bucket("other-type", "alicloud", bad)
	other.Labels = map[string]string{"provider.extensions.gardener.cloud/aws": "true"}
	if err := garden.Create(ctx, other); err != nil {
		t.Fatalf("a bucket of another type reached the admission: %v", err)
	}
	if other.Labels["provider.extensions.gardener.cloud/aws"] != "" || other.Labels["provider.extensions.gardener.cloud/alicloud"] != "true" {
		t.Errorf("labels %v; want only provider.extensions.gardener.cloud/alicloud (gardener-apiserver recomputes them)", other.Labels)
	}
}
