// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	operatorvalidation "github.com/gardener/gardener/pkg/api/operator/v1alpha1/validation"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// operatorValues are what gardener-operator (v1.150.0) merges into the admission's charts of an
// Extension named backup-admission: the runtime part's and the virtual part's.
var (
	operatorRuntimeValues = map[string]any{"gardener": map[string]any{
		"runtimeCluster": map[string]any{"priorityClassName": "gardener-garden-system-400"},
		"virtualCluster": map[string]any{"enabled": true, "namespace": "extension-backup-admission"},
	}}
	operatorVirtualValues = map[string]any{"gardener": map[string]any{
		"virtualCluster": map[string]any{"enabled": true, "serviceAccount": map[string]any{"name": "extension-admission-backup-admission", "namespace": "kube-system"}},
	}}
)

func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var args []string
	for _, a := range containers[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

// TestAdmissionCharts: the runtime part renders the Deployment, Service and RBAC, in the url form
// for a virtual garden (the URL is the Service's DNS name, where the virtual garden's API server in
// the same cluster reaches it) and in the service form for one cluster (the Service gardener's
// webhook library names in the configuration); the application part renders only RBAC; neither
// renders a webhook configuration or a CA bundle (the admission registers them). The API server
// accepts every object and the admission's command every argument.
func TestAdmissionCharts(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                     string
		runtime, virtual         map[string]any
		wantArgs, wantNotArgs    []string
		wantPriority             string
		wantRuntime, wantVirtual []string
	}{
		{"virtual garden (gardener-operator)", operatorRuntimeValues, operatorVirtualValues,
			[]string{"--webhook-config-mode=url", "--webhook-config-url=" + admission.Name + ".garden", "--runtime-cluster", "--webhook-config-owner-namespace=extension-backup-admission", "--webhook-config-namespace=garden", "--webhook-failure-policy=Fail"},
			[]string{"--webhook-config-mode=service"}, "gardener-garden-system-400",
			[]string{"Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount", "VerticalPodAutoscaler"},
			[]string{"ClusterRole", "ClusterRoleBinding"}},
		{"one cluster", map[string]any{"failurePolicy": "Ignore"}, map[string]any{},
			[]string{"--webhook-config-mode=service", "--webhook-config-namespace=garden", "--webhook-failure-policy=Ignore"},
			[]string{"--runtime-cluster", "--webhook-config-mode=url"}, "",
			[]string{"Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount", "VerticalPodAutoscaler"},
			[]string{"ClusterRole", "ClusterRoleBinding"}},
		{"virtual garden without gardener-operator", map[string]any{"gardener": map[string]any{"virtualCluster": map[string]any{"enabled": true}}, "kubeconfig": "apiVersion: v1\nkind: Config\n"},
			map[string]any{"gardener": map[string]any{"virtualCluster": map[string]any{"enabled": true}}},
			[]string{"--webhook-config-mode=url", "--runtime-cluster", "--kubeconfig=/etc/" + admission.Name + "/kubeconfig/kubeconfig"},
			nil, "",
			[]string{"Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Secret", "Service", "ServiceAccount", "VerticalPodAutoscaler"},
			[]string{"ClusterRole", "ClusterRoleBinding", "ServiceAccount"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt, err := charts.RenderAdmission(charts.AdmissionRuntimePath, "garden", c.runtime)
			if err != nil {
				t.Fatal(err)
			}
			vt, err := charts.RenderAdmission(charts.AdmissionApplicationPath, "extension-backup-admission", c.virtual)
			if err != nil {
				t.Fatal(err)
			}
			for _, set := range []struct {
				objs []*unstructured.Unstructured
				want []string
			}{{rt, c.wantRuntime}, {vt, c.wantVirtual}} {
				var kinds []string
				for _, o := range set.objs {
					kinds = append(kinds, o.GetKind())
					if o.GetNamespace() == "extension-backup-admission" {
						o.SetNamespace("garden") // envtest has garden; the namespace's name is no part of the check
					}
					if err := k8s.Create(ctx, o, client.DryRunAll); err != nil {
						t.Errorf("%s %s is refused by the API server: %v", o.GetKind(), o.GetName(), err)
					}
				}
				slices.Sort(kinds)
				if !slices.Equal(kinds, set.want) {
					t.Errorf("kinds %v; want %v", kinds, set.want)
				}
			}
			k := byKind(rt)
			d := k["Deployment"]
			args := containerArgs(t, d)
			for _, a := range c.wantArgs {
				if !slices.Contains(args, a) {
					t.Errorf("args %v lack %s", args, a)
				}
			}
			for _, a := range c.wantNotArgs {
				if slices.Contains(args, a) {
					t.Errorf("args %v hold %s", args, a)
				}
			}
			if err := admission.NewCommand(admission.Validator{}).ParseFlags(args); err != nil {
				t.Errorf("the admission refuses the chart's args: %v", err)
			}
			if got := str(d, "spec", "template", "spec", "priorityClassName"); got != c.wantPriority {
				t.Errorf("priorityClassName %q; want %q", got, c.wantPriority)
			}
			if got := str(d, "metadata", "labels", "high-availability-config.resources.gardener.cloud/type"); got != "server" {
				t.Errorf("HA config type %q; want server", got)
			}
			svc := k["Service"]
			ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			if svc.GetName() != admission.Name || fmt.Sprint(ports[0].(map[string]any)["port"]) != "443" || !slices.Contains(args, "--webhook-config-service-port=443") {
				t.Errorf("Service %s ports %v; want %s on 443, the port the webhook configuration names", svc.GetName(), ports, admission.Name)
			}
			if got := str(k["PodDisruptionBudget"], "spec", "unhealthyPodEvictionPolicy"); got != "AlwaysAllow" {
				t.Errorf("PDB unhealthyPodEvictionPolicy %q", got)
			}
			for _, o := range append(rt, vt...) {
				if o.GetKind() == "ValidatingWebhookConfiguration" || strings.Contains(fmt.Sprint(o.Object), "caBundle") {
					t.Errorf("%s %s: the admission registers its webhook configuration and CA itself", o.GetKind(), o.GetName())
				}
			}
		})
	}
}

func TestAdmissionValuesSchema(t *testing.T) {
	for _, c := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"failurePolicy": "Maybe"}, "failurePolicy"},
		{map[string]any{"replicaCount": 0}, "replicaCount"},
		{map[string]any{"caBundle": "LS0t"}, "caBundle"},
	} {
		if _, err := charts.RenderAdmission(charts.AdmissionRuntimePath, "garden", c.values); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %v: %v; want a schema error naming %s", c.values, err, c.want)
		}
	}
}

// TestAdmissionRunsWithTheChartsRBAC: the admission, started with the runtime part's arguments for
// a virtual garden, issues its certificates and registers its webhook configuration with the CA
// bundle holding no permission but the charts': in the runtime cluster (a second envtest) as the
// runtime part's ServiceAccount, in the virtual garden (this package's envtest) as the identity
// gardener-operator binds the application part to (each reached as that identity by
// impersonation). The certificates and the lease are in the runtime cluster, none in the garden.
func TestAdmissionRunsWithTheChartsRBAC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		t.Fatal(err)
	}
	runtimeEnv := &envtest.Environment{BinaryAssetsDirectory: assets}
	runtimeCfg, err := runtimeEnv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runtimeEnv.Stop() })
	runtimeClient, err := client.New(runtimeCfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtimeClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: stack.CoreCRDs()}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "extension-backup-admission"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	rt, err := charts.RenderAdmission(charts.AdmissionRuntimePath, "garden", operatorRuntimeValues)
	if err != nil {
		t.Fatal(err)
	}
	vt, err := charts.RenderAdmission(charts.AdmissionApplicationPath, "extension-backup-admission", operatorVirtualValues)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range rt {
		switch o.GetKind() {
		case "Deployment":
			args = containerArgs(t, o)
		case "Role", "RoleBinding":
			if err := runtimeClient.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, o := range vt {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			if err := k8s.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = k8s.Delete(context.Background(), o) })
		}
	}
	dir := t.TempDir()
	runtimeKubeconfig := impersonating(t, dir, "runtime", runtimeCfg, "garden", admission.Name)
	gardenKubeconfig := impersonating(t, dir, "garden", cfg, "kube-system", "extension-admission-backup-admission")
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// What the test changes: where the two clusters and the webhook server are (the URL the
	// chart names resolves in the runtime cluster only), and no metrics or health servers.
	var run []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--webhook-config-url=") && !strings.HasPrefix(a, "--metrics-bind-address=") && !strings.HasPrefix(a, "--health-bind-address=") && !strings.HasPrefix(a, "--webhook-config-cert-dir=") {
			run = append(run, a)
		}
	}
	run = append(run, "--kubeconfig="+gardenKubeconfig, "--runtime-kubeconfig="+runtimeKubeconfig,
		fmt.Sprintf("--webhook-config-url=127.0.0.1:%d", port), "--webhook-config-server-host=127.0.0.1", fmt.Sprintf("--webhook-config-server-port=%d", port),
		"--webhook-config-cert-dir="+filepath.Join(dir, "certs"), "--metrics-bind-address=0", "--health-bind-address=0")
	done, exited := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(exited)
		cmd := admission.NewCommand(admission.Validator{APIs: all.APIs()})
		cmd.SetArgs(run)
		done <- cmd.ExecuteContext(ctx)
	}()
	// Stopped before the RBAC and the configuration are removed (cleanups run last in, first out).
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: admission.Name}})
	})
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("the admission ended with the charts' RBAC: %v", err)
		default:
		}
		// Two writers in gardener's library: the certificate reconciler may create the
		// configuration with its CA bundle first, and the leader's one-off registration adds the
		// owner reference after it; so wait for both.
		if err := k8s.Get(ctx, client.ObjectKey{Name: admission.Name}, vwc); err == nil && len(vwc.Webhooks) > 0 && len(vwc.Webhooks[0].ClientConfig.CABundle) > 0 && len(vwc.OwnerReferences) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no webhook configuration with a CA bundle and an owner within 60s (owners %v)", vwc.OwnerReferences)
		}
	}
	if owners := vwc.OwnerReferences; len(owners) != 1 || owners[0].Kind != "Namespace" || owners[0].Name != "extension-backup-admission" {
		t.Errorf("owner references %v; want the namespace extension-backup-admission gardener-operator names", owners)
	}
	identity := client.MatchingLabels{"managed-by": "secrets-manager", "manager-identity": admission.Name + "-webhook"}
	secrets := &corev1.SecretList{}
	if err := runtimeClient.List(ctx, secrets, client.InNamespace("garden"), identity); err != nil || len(secrets.Items) == 0 {
		t.Errorf("the certificates' secrets in the runtime cluster's garden: %d, %v", len(secrets.Items), err)
	}
	if err := k8s.List(ctx, secrets, identity); err != nil || len(secrets.Items) > 0 {
		t.Errorf("the certificates' secrets in the virtual garden: %d, %v; want none", len(secrets.Items), err)
	}
	lease := &unstructured.Unstructured{}
	lease.SetAPIVersion("coordination.k8s.io/v1")
	lease.SetKind("Lease")
	if err := runtimeClient.Get(ctx, client.ObjectKey{Namespace: "garden", Name: admission.Name + "-leader-election"}, lease); err != nil {
		t.Errorf("the leader election lease in the runtime cluster: %v", err)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "garden", Name: admission.Name + "-leader-election"}, lease); err == nil {
		t.Error("a leader election lease in the virtual garden")
	}
}

// impersonating writes a kubeconfig that reaches the envtest API server as the ServiceAccount
// namespace/name (its user name and groups, as RBAC sees a ServiceAccount's token).
func impersonating(t *testing.T, dir, name string, cfg *rest.Config, namespace, sa string) string {
	t.Helper()
	user := &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
		Impersonate:       "system:serviceaccount:" + namespace + ":" + sa,
		ImpersonateGroups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = user
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAdmissionExtension: the admission's gardener-operator Extension passes gardener-operator's
// own validation.
func TestAdmissionExtension(t *testing.T) {
	ext := charts.AdmissionExtension("example.org/charts/gardener-extension-backup-admission-runtime:0.1.0", "example.org/charts/gardener-extension-backup-admission-application:0.1.0")
	if errs := operatorvalidation.ValidateExtension(ext); len(errs) > 0 {
		t.Fatalf("gardener-operator refuses the Extension: %v", errs.ToAggregate())
	}
	b, err := sigsyaml.Marshal(ext)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b)
}
