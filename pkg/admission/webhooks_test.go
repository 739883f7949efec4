// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// TestCertificatesAreManaged: the admission registered its webhook configuration itself, two
// webhooks per provider type in url mode, each selecting the objects gardener labels with the
// type, failing closed, with the CA bundle of the CA gardener's secrets manager keeps in garden;
// and that CA verifies the certificate the webhook server presents for the URL's host.
func TestCertificatesAreManaged(t *testing.T) {
	ctx := context.Background()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range vwc.Webhooks {
		names = append(names, w.Name)
		var name, label string
		wantResources := []string{"backupbuckets", "seeds"}
		for _, typ := range all.Types() {
			switch w.Name {
			case "provider-" + typ + "." + admission.Name + ".extensions.gardener.cloud":
				name, label = "provider-"+typ, admission.ProviderLabel(typ)
			case "seed-extension-" + typ + "." + admission.Name + ".extensions.gardener.cloud":
				name, label, wantResources = "seed-extension-"+typ, admission.ExtensionLabel(typ), []string{"seeds"}
			}
		}
		if label == "" {
			t.Errorf("webhook %s: unexpected name", w.Name)
			continue
		}
		if want := fmt.Sprintf("https://127.0.0.1:%d%s/%s", port, admission.Path, name); w.ClientConfig.URL == nil || *w.ClientConfig.URL != want || w.ClientConfig.Service != nil {
			t.Errorf("webhook %s: client config %+v; want the url %s", w.Name, w.ClientConfig, want)
		}
		if w.ObjectSelector == nil || len(w.ObjectSelector.MatchLabels) != 1 || w.ObjectSelector.MatchLabels[label] != "true" || len(w.ObjectSelector.MatchExpressions) > 0 {
			t.Errorf("webhook %s: object selector %v; want %s=true", w.Name, w.ObjectSelector, label)
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("webhook %s: failure policy %v; want Fail", w.Name, w.FailurePolicy)
		}
		var resources []string
		for _, r := range w.Rules {
			resources = append(resources, r.Resources...)
			if !slices.Equal(r.APIGroups, []string{"core.gardener.cloud"}) || !slices.Equal(r.APIVersions, []string{"v1beta1"}) {
				t.Errorf("webhook %s: rule %+v", w.Name, r)
			}
		}
		slices.Sort(resources)
		if !slices.Equal(resources, wantResources) {
			t.Errorf("webhook %s: resources %v; want %v", w.Name, resources, wantResources)
		}
	}
	if len(names) != 2*len(all.Types()) {
		t.Errorf("webhooks %v; want two per provider type %v", names, all.Types())
	}

	// The CA bundle is the one the secrets manager keeps (its bundle secret in garden).
	secrets := &corev1.SecretList{}
	if err := k8s.List(ctx, secrets, client.InNamespace("garden"), client.MatchingLabels{"managed-by": "secrets-manager", "manager-identity": admission.Name + "-webhook"}); err != nil {
		t.Fatal(err)
	}
	var bundle []byte
	var secretNames []string
	for _, s := range secrets.Items {
		secretNames = append(secretNames, s.Labels["name"])
		if s.Labels["name"] == "ca-"+admission.Name+"-webhook-bundle" {
			bundle = s.Data["bundle.crt"]
		}
	}
	if len(bundle) == 0 || !slices.Contains(secretNames, admission.Name+"-webhook-server") {
		t.Fatalf("secrets-manager secrets %v in garden; want the CA bundle and the server certificate", secretNames)
	}
	for _, w := range vwc.Webhooks {
		if string(w.ClientConfig.CABundle) != string(bundle) {
			t.Errorf("webhook %s: CA bundle is not the secrets manager's", w.Name)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatal("the CA bundle holds no certificate")
	}
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("the webhook server's certificate does not verify with the configuration's CA bundle: %v", err)
	}
	conn.Close()
}

// requests is the number of admission requests the webhook server has answered.
func requests(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() == "controller_runtime_webhook_requests_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestOtherTypesAreNotIntercepted: Seeds and BackupBuckets of a provider type this extension does
// not serve never reach the admission (so its failure policy cannot block them); this
// extension's types do, and so does a Seed of another type that declares this extension's seed
// configuration; and the selector is what decides: an aws bucket whose labels (forged, as
// gardener never leaves them) name another type passes unchecked.
func TestOtherTypesAreNotIntercepted(t *testing.T) {
	ctx := context.Background()
	before := requests(t)
	if err := k8s.Create(ctx, object("BackupBucket", "alicloud", `{"anything":"goes"}`)); err != nil {
		t.Fatal(err)
	}
	seed := object("Seed", "alicloud", `{"anything":"goes"}`)
	if err := unstructured.SetNestedField(seed.Object, "alicloud", "spec", "provider", "type"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, seed); err != nil {
		t.Fatal(err)
	}
	if after := requests(t); after != before {
		t.Errorf("%v admission requests for objects of another type; want none", after-before)
	}

	if err := k8s.Create(ctx, object("BackupBucket", "aws", "")); err != nil {
		t.Fatal(err)
	}
	if after := requests(t); after == before {
		t.Error("an aws BackupBucket reached no webhook")
	}

	declaring := object("Seed", "alicloud", `{"anything":"goes"}`)
	if err := unstructured.SetNestedSlice(declaring.Object, []any{map[string]any{"type": "backup-gcp", "providerConfig": map[string]any{
		"apiVersion": "gcp.backup.extensions.gardener.cloud/v1alpha1", "kind": "BackupBucketConfig", "handback": true,
	}}}, "spec", "extensions"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, declaring); err == nil {
		t.Error("a Seed of another type declaring backup-gcp with an unknown field was admitted")
	}

	forged := object("BackupBucket", "aws", `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","encryptionn":{}}`)
	forged.SetLabels(map[string]string{"forged": "true", "provider.extensions.gardener.cloud/alicloud": "true"})
	if err := k8s.Create(ctx, forged); err != nil {
		t.Errorf("an object the selector does not select was checked: %v", err)
	}
}

// caBundle is the secrets manager's current CA bundle in garden.
func caBundle(t *testing.T) []byte {
	t.Helper()
	secrets := &corev1.SecretList{}
	if err := k8s.List(context.Background(), secrets, client.InNamespace("garden"), client.MatchingLabels{"managed-by": "secrets-manager", "name": "ca-" + admission.Name + "-webhook-bundle"}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 {
		t.Fatalf("%d CA bundle secrets; want one", len(secrets.Items))
	}
	return secrets.Items[0].Data["bundle.crt"]
}

// waitFor polls cond every 200ms for up to 60s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60s", what)
		}
	}
}

// TestCABundleConverges: the certificate reconciler keeps the webhook configuration's CA bundle the
// secrets manager's: a bundle changed by hand is put back; a CA that is lost (its secrets deleted)
// is issued anew, the configuration carries the new bundle and the server presents a certificate
// that verifies with it.
func TestCABundleConverges(t *testing.T) {
	ctx := context.Background()
	vwcBundles := func() []string {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range vwc.Webhooks {
			out = append(out, string(w.ClientConfig.CABundle))
		}
		return out
	}
	all := func(bundles []string, want []byte) bool {
		return len(bundles) > 0 && !slices.ContainsFunc(bundles, func(b string) bool { return b != string(want) })
	}

	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err != nil {
		t.Fatal(err)
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig.CABundle = []byte("not a CA")
	}
	if err := k8s.Update(ctx, vwc); err != nil {
		t.Fatal(err)
	}
	want := caBundle(t)
	waitFor(t, "the CA bundle changed by hand is put back", func() bool { return all(vwcBundles(), want) })

	old := string(want)
	if err := k8s.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace("garden"), client.MatchingLabels{"managed-by": "secrets-manager", "manager-identity": admission.Name + "-webhook"}); err != nil {
		t.Fatal(err)
	}
	var renewed []byte
	waitFor(t, "a new CA is issued and written into the configuration", func() bool {
		secrets := &corev1.SecretList{}
		if err := k8s.List(ctx, secrets, client.InNamespace("garden"), client.MatchingLabels{"name": "ca-" + admission.Name + "-webhook-bundle"}); err != nil || len(secrets.Items) != 1 {
			return false
		}
		renewed = secrets.Items[0].Data["bundle.crt"]
		return string(renewed) != old && all(vwcBundles(), renewed)
	})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(renewed) {
		t.Fatal("the new bundle holds no certificate")
	}
	waitFor(t, "the server presents a certificate of the new CA", func() bool {
		conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	if err := k8s.Create(ctx, object("BackupBucket", "aws", `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","encryptionn":{}}`)); err == nil || !strings.Contains(err.Error(), "encryptionn") {
		t.Errorf("after the new CA: %v; want the webhook's refusal", err)
	}
}
