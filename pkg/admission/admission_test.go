// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener/gardener/extensions/pkg/webhook/certificates"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

var k8s client.Client

var (
	// port is the admission's webhook server port (127.0.0.1).
	port int
	// kubeconfig reaches envtest.
	kubeconfig string
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// run starts envtest and the admission's own command on it, in url mode (the API server is a
// local process) with its certificates managed by gardener's library in the namespace garden, and
// waits until the webhook configuration carries the CA bundle.
func run(m *testing.M) (int, error) {
	assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		return 0, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDs:                  stack.CoreCRDs(),
	}
	cfg, err := env.Start()
	if err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
	plain, err := client.NewWithWatch(cfg, client.Options{})
	if err != nil {
		return 0, err
	}
	k8s = interceptor.NewClient(plain, extensionLabels)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := plain.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "admission-test")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return 0, err
	}
	// The certificate reconciler's and reloader's period (gardener's default 5m), short so that
	// TestCABundleConverges sees them act.
	certificates.DefaultSyncPeriod = 2 * time.Second
	if port, err = freePort(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() {
		cmd := admission.NewCommand(admission.Validator{APIs: all.APIs()})
		cmd.SetArgs([]string{
			"--kubeconfig=" + kubeconfig, "--leader-election=false", "--metrics-bind-address=0", "--health-bind-address=0",
			"--webhook-config-server-host=127.0.0.1", fmt.Sprintf("--webhook-config-server-port=%d", port), "--webhook-config-cert-dir=" + filepath.Join(dir, "certs"),
			"--webhook-config-mode=url", fmt.Sprintf("--webhook-config-url=127.0.0.1:%d", port), "--webhook-config-namespace=garden",
		})
		done <- cmd.ExecuteContext(ctx)
	}()
	if err := waitForCABundle(ctx, plain, done); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// waitForCABundle waits until every webhook of the configuration carries a CA bundle and the
// server answers TLS, or the command ends.
func waitForCABundle(ctx context.Context, c client.Client, done <-chan error) error {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-done:
			return fmt.Errorf("the admission ended: %v", err)
		default:
		}
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err != nil || len(vwc.Webhooks) == 0 || len(vwc.Webhooks[0].ClientConfig.CABundle) == 0 {
			continue
		}
		if conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true}); err == nil { //nolint:gosec // a readiness probe; TestCertificatesAreManaged verifies the chain
			conn.Close()
			return nil
		}
	}
	return fmt.Errorf("no webhook configuration %s with a CA bundle and a serving webhook server within 60s", admission.Name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// extensionLabels stands in for gardener-apiserver's ExtensionLabels admission plugin (gardener
// v1.150.0, plugin/pkg/global/extensionlabels), which envtest lacks: on every create and update
// it removes the extension labels and sets provider.extensions.gardener.cloud/<type> for a
// BackupBucket's spec.provider.type and a Seed's spec.provider.type and spec.backup.provider, and
// extensions.extensions.gardener.cloud/<type> for each enabled entry of a Seed's spec.extensions.
// An object labelled "forged" keeps its labels as they are (to show what the selector admits).
var extensionLabels = interceptor.Funcs{
	Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		labelAsGardener(obj)
		return c.Create(ctx, obj, opts...)
	},
	Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		labelAsGardener(obj)
		return c.Update(ctx, obj, opts...)
	},
}

func labelAsGardener(obj client.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetLabels()["forged"] == "true" {
		return
	}
	labels := map[string]string{}
	for k, v := range u.GetLabels() {
		if !strings.HasPrefix(k, "provider.extensions.gardener.cloud/") && !strings.HasPrefix(k, "extensions.extensions.gardener.cloud/") {
			labels[k] = v
		}
	}
	set := func(prefix string, path ...string) {
		if v, _, _ := unstructured.NestedString(u.Object, path...); v != "" {
			labels[prefix+v] = "true"
		}
	}
	switch u.GetKind() {
	case "BackupBucket":
		set("provider.extensions.gardener.cloud/", "spec", "provider", "type")
	case "Seed":
		set("provider.extensions.gardener.cloud/", "spec", "provider", "type")
		set("provider.extensions.gardener.cloud/", "spec", "backup", "provider")
		exts, _, _ := unstructured.NestedSlice(u.Object, "spec", "extensions")
		for _, e := range exts {
			if e, ok := e.(map[string]any); ok && e["disabled"] != true {
				labels["extensions.extensions.gardener.cloud/"+fmt.Sprint(e["type"])] = "true"
			}
		}
	}
	u.SetLabels(labels)
}

var seq int

func object(kind, typ, config string) *unstructured.Unstructured {
	seq++
	spec := map[string]any{}
	switch kind {
	case "BackupBucket":
		spec["provider"] = map[string]any{"type": typ, "region": "r"}
	case "Seed":
		if typ != "" {
			spec["backup"] = map[string]any{"provider": typ}
		}
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": kind, "metadata": map[string]any{"name": fmt.Sprintf("bucket-%d", seq)}, "spec": spec}}
	setConfig(o, config)
	return o
}

// setConfig replaces the object's backup providerConfig with config (JSON).
func setConfig(o *unstructured.Unstructured, config string) {
	if config == "" {
		return
	}
	raw := map[string]any{}
	if err := json.Unmarshal([]byte(config), &raw); err != nil {
		panic(err)
	}
	path := []string{"spec", "providerConfig"}
	if o.GetKind() == "Seed" {
		path = []string{"spec", "backup", "providerConfig"}
	}
	if err := unstructured.SetNestedMap(o.Object, raw, path...); err != nil {
		panic(err)
	}
}

// TestBucketNamesAreCheckedByTheStoresRules: a core BackupBucket's name is its bucket's, so a name
// the store would refuse is refused at kubectl apply (names the API server accepts as object
// names, but the store does not).
func TestBucketNamesAreCheckedByTheStoresRules(t *testing.T) {
	cases := []struct{ typ, name, wantDenied string }{
		{"aws", "xn--backup", `metadata.name: bucket name "xn--backup"`},
		{"aws", "10.1.2.3", "IP address"},
		{"gcp", "goog-backup", `"goog-backup"`},
		{"azure", "two--dashes", `"two--dashes"`},
		{"azure", "with.dot", `"with.dot"`},
		{"aws", "a-valid-bucket", ""},
		{"openstack", "a-valid-container", ""},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.name, func(t *testing.T) {
			o := object("BackupBucket", c.typ, "")
			o.SetName(c.name)
			err := k8s.Create(context.Background(), o)
			wantVerdict(t, err, c.wantDenied)
		})
	}
}

func TestCreateIsValidatedWithFieldPaths(t *testing.T) {
	const gcpHead = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
	cases := []struct {
		name, kind, typ, config string
		wantDenied              string // "" : allowed
	}{
		{"valid aws bucket", "BackupBucket", "aws", `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"compliance"}}`, ""},
		{"bucket without providerConfig", "BackupBucket", "gcp", "", ""},
		{"gcp retention too short", "BackupBucket", "gcp", gcpHead + `,"immutability":{"retentionType":"bucket","retentionPeriod":"1h"}}`, "spec.providerConfig.immutability.retentionPeriod"},
		{"azure seed with an unknown sku", "Seed", "azure", `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","storageAccount":{"skuName":"Premium_LRS"}}`, "spec.backup.providerConfig.storageAccount.skuName"},
		{"openstack seed asking immutability", "Seed", "openstack", `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`, "spec.backup.providerConfig.immutability"},
		{"unknown field", "BackupBucket", "aws", `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","encryptionn":{}}`, "encryptionn"},
		{"seed without backup", "Seed", "", "", ""},
		{"another extension's type", "BackupBucket", "alicloud", `{"anything":"goes"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), object(c.kind, c.typ, c.config))
			wantVerdict(t, err, c.wantDenied)
		})
	}
}

func TestLockedImmutabilityIsNeverWeakened(t *testing.T) {
	gcpConfig := func(period string, locked bool) string {
		return fmt.Sprintf(`{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":%q,"locked":%v}}`, period, locked)
	}
	awsConfig := func(mode string) string {
		return fmt.Sprintf(`{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"48h","mode":%q}}`, mode)
	}
	cases := []struct {
		name, kind, typ, from, to, wantDenied string
	}{
		{"unlocked may be shortened", "BackupBucket", "gcp", gcpConfig("48h", false), gcpConfig("24h", false), ""},
		{"locked may be extended", "BackupBucket", "gcp", gcpConfig("48h", true), gcpConfig("72h", true), ""},
		{"locked is not shortened", "BackupBucket", "gcp", gcpConfig("48h", true), gcpConfig("24h", true), "spec.providerConfig.immutability.retentionPeriod: Forbidden"},
		{"locked is not unlocked", "Seed", "gcp", gcpConfig("48h", true), gcpConfig("48h", false), "spec.backup.providerConfig.immutability: Forbidden"},
		{"locked is not removed", "BackupBucket", "azure", `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"48h","locked":true}}`,
			`{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`, "can never be removed"},
		{"compliance is not turned into governance", "BackupBucket", "aws", awsConfig("compliance"), awsConfig("governance"), "never be unlocked"},
		{"governance may become compliance", "BackupBucket", "aws", awsConfig("governance"), awsConfig("compliance"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			o := object(c.kind, c.typ, c.from)
			if err := k8s.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
			setConfig(o, c.to)
			err := k8s.Update(ctx, o)
			wantVerdict(t, err, c.wantDenied)
		})
	}
}

// TestSeedExtensionIsValidated: this extension's seed configuration, a Seed's spec.extensions
// entry of type backup-<provider>, is checked as the controllers read it, merged with the
// providerConfig: its own problems named at its field path, conflicts at the providerConfig; an
// entry of another provider is checked on its own, a disabled one and other extensions' not at all.
func TestSeedExtensionIsValidated(t *testing.T) {
	const (
		incumbent = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
		ours      = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
		gcpOurs   = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
		at        = "spec.extensions[1].providerConfig"
	)
	type entry struct {
		typ, config string
		disabled    bool
	}
	cases := []struct {
		name, config string
		extensions   []entry
		wantDenied   string // "": allowed
	}{
		{"the incumbent's form and this extension's fields", incumbent, []entry{{typ: "backup-aws", config: ours + `,"handBack":true,"generatedCredentials":{"issuer":"IAM"}}`}}, ""},
		{"an unknown field in the entry", incumbent, []entry{{typ: "backup-aws", config: ours + `,"handback":true}`}}, at + `: Invalid value: unknown field "handback"`},
		{"the incumbent's field in the entry", incumbent, []entry{{typ: "backup-aws", config: ours + `,"immutability":{"retentionType":"bucket","retentionPeriod":"48h","mode":"governance"}}`}}, at + ".immutability: Forbidden"},
		{"a field set to different values in both", ours + `,"disabledSettings":["TLSOnlyPolicy"]}`, []entry{{typ: "backup-aws", config: ours + `,"disabledSettings":["PublicAccessBlock"]}`}}, "spec.backup.providerConfig.disabledSettings"},
		{"another provider's entry, on its own", incumbent, []entry{{typ: "backup-gcp", config: gcpOurs + `,"handback":true}`}}, at + `: Invalid value: unknown field "handback"`},
		{"a disabled entry", incumbent, []entry{{typ: "backup-aws", config: ours + `,"handback":true}`, disabled: true}}, ""},
		{"another extension's entry", incumbent, []entry{{typ: "shoot-dns-service", config: `{"anything":1}`}}, ""},
		{"no providerConfig", incumbent, []entry{{typ: "backup-aws"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := object("Seed", "aws", c.config)
			exts := []any{map[string]any{"type": "some-other"}}
			for _, e := range c.extensions {
				ext := map[string]any{"type": e.typ}
				if e.disabled {
					ext["disabled"] = true
				}
				if e.config != "" {
					pc := map[string]any{}
					if err := json.Unmarshal([]byte(e.config), &pc); err != nil {
						t.Fatal(err)
					}
					ext["providerConfig"] = pc
				}
				exts = append(exts, ext)
			}
			if err := unstructured.SetNestedSlice(seed.Object, exts, "spec", "extensions"); err != nil {
				t.Fatal(err)
			}
			err := k8s.Create(context.Background(), seed)
			wantVerdict(t, err, c.wantDenied)
		})
	}
}

// TestSeedCopyIsValidated: a seed configuration's `copy:` is decoded as the controllers do (a copy
// of another type by that type's rules), and its credentialsRef must be a Secret the Seed's spec.resources lists.
func TestSeedCopyIsValidated(t *testing.T) {
	const ours = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","copy":`
	cases := []struct {
		name, copy string
		listed     bool
		wantDenied string // "": allowed
	}{
		{"listed", `{"credentialsRef":"backup-copy"}`, true, ""},
		{"not listed", `{"credentialsRef":"backup-copy"}`, false, `spec.extensions[0].providerConfig.copy.credentialsRef: Invalid value: "backup-copy": the Seed's spec.resources must list this Secret`},
		{"another type", `{"type":"gcp","credentialsRef":"backup-copy"}`, true, ""},
		{"another type's providerConfig, by its rules", `{"type":"gcp","credentialsRef":"backup-copy","providerConfig":{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"1h"}}}`, true, `spec.extensions[0].providerConfig.copy.providerConfig.immutability.retentionPeriod`},
		{"a type nobody registered", `{"type":"ibm","credentialsRef":"backup-copy"}`, true, `spec.extensions[0].providerConfig.copy.type: Unsupported value: "ibm"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := object("Seed", "aws", "")
			pc := map[string]any{}
			if err := json.Unmarshal([]byte(ours+c.copy+"}"), &pc); err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedSlice(seed.Object, []any{map[string]any{"type": "backup-aws", "providerConfig": pc}}, "spec", "extensions"); err != nil {
				t.Fatal(err)
			}
			if c.listed {
				res := []any{map[string]any{"name": "copy", "resourceRef": map[string]any{"kind": "Secret", "apiVersion": "v1", "name": "backup-copy"}}}
				if err := unstructured.SetNestedSlice(seed.Object, res, "spec", "resources"); err != nil {
					t.Fatal(err)
				}
			}
			err := k8s.Create(context.Background(), seed)
			wantVerdict(t, err, c.wantDenied)
		})
	}
}

// wantVerdict checks the API server's answer err to a request: admitted when wantDenied is "",
// else refused with a message containing wantDenied.
func wantVerdict(t *testing.T, err error, wantDenied string) {
	t.Helper()
	switch {
	case wantDenied == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case wantDenied != "" && (err == nil || !strings.Contains(err.Error(), wantDenied)):
		t.Fatalf("got %v; want a refusal naming %q", err, wantDenied)
	}
}
