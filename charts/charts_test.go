// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/chartrenderer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

var (
	k8s client.Client
	// cfg reaches the envtest API server (monitoring_test installs prometheus-operator's CRDs).
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	var env *envtest.Environment
	var err error
	env, cfg, err = stack.StartEnvtest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scheme, err := app.Scheme()
	if err == nil {
		k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	}
	if err == nil {
		err = k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}})
	}
	if err == nil {
		err = installVPACRD(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

func render(values map[string]any) ([]*unstructured.Unstructured, error) {
	return charts.Render("extension-backup", values)
}

func TestChartRendersValidObjectsForEveryProvider(t *testing.T) {
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "extension-backup"}}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, p := range charts.Providers {
		t.Run(p, func(t *testing.T) {
			objs, err := render(map[string]any{"provider": p, "controllers": map[string]any{"concurrentSyncs": 7, "deletionParallelism": 8, "extensionClasses": []string{"seed", "shoot"}}, "kubeAPI": map[string]any{"qps": 50, "burst": 60}})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
				// The API server's own validation of every object, nothing stored.
				if err := k8s.Create(ctx, o, client.DryRunAll); err != nil {
					t.Errorf("%s %s is refused by the API server: %v", o.GetKind(), o.GetName(), err)
				}
				if o.GetKind() != "Deployment" {
					continue
				}
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				c := containers[0].(map[string]any)
				if img := c["image"].(string); !strings.Contains(img, "/gardener-extension-backup-"+p+":") {
					t.Errorf("image %s is not the %s binary's", img, p)
				}
				args := fmt.Sprint(c["args"])
				wants := []string{"--kube-api-qps=50", "--kube-api-burst=60", "--extension-classes=seed,shoot", "--leader-election-namespace=extension-backup"}
				if !strings.HasSuffix(o.GetName(), "-restore-drill") { // the drills' Deployment reconciles nothing but drills
					wants = append(wants, "--max-concurrent-reconciles=7")
				}
				for _, want := range wants {
					if !strings.Contains(args, want) {
						t.Errorf("args %s lack %s", args, want)
					}
				}
				// The binary knows every flag the chart passes (the local binary adds its own two).
				var list []string
				for _, a := range c["args"].([]any) {
					if !strings.HasPrefix(a.(string), "--local-") {
						list = append(list, a.(string))
					}
				}
				if err := app.NewCommand(provider.Register(controllertest.Provider{})).ParseFlags(list); err != nil {
					t.Errorf("the binary refuses the chart's args: %v", err)
				}
				sc := c["securityContext"].(map[string]any)
				if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false {
					t.Errorf("container security context %v", sc)
				}
			}
			slices.Sort(kinds)
			// The controllers' and the restore drills' Deployments, each with its identity (service
			// account, roles, bindings), metrics Service and VPA; and the controllers' Role and
			// RoleBinding in garden (the copies' credentials secrets, watched).
			want := []string{"ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding", "Deployment", "Deployment", "PodDisruptionBudget", "Role", "Role", "Role", "RoleBinding", "RoleBinding", "RoleBinding", "Service", "Service", "ServiceAccount", "ServiceAccount", "VerticalPodAutoscaler", "VerticalPodAutoscaler"}
			if !slices.Equal(kinds, want) {
				t.Fatalf("kinds %v; want %v", kinds, want)
			}
		})
	}
}

func TestChartAcceptsWhatGardenletInjects(t *testing.T) {
	// gardenlet merges these into the ControllerDeployment's values when it renders the chart.
	injected := map[string]any{"provider": "gcp", "gardener": map[string]any{
		"version":   "v1.150.0",
		"garden":    map[string]any{"clusterIdentity": "garden", "genericKubeconfigSecretName": "generic-garden-kubeconfig"},
		"seed":      map[string]any{"name": "aws-eu1", "provider": "aws", "region": "eu-central-1", "labels": map[string]any{}, "spec": map[string]any{}},
		"gardenlet": map[string]any{"featureGates": map[string]any{}},
	}}
	if _, err := render(injected); err != nil {
		t.Fatalf("the chart refuses gardenlet's values: %v", err)
	}
}

// TestSeedExtensionFromGardenletsValues: the chart passes --seed-extension-declared when the
// Seed's spec (gardener.seed.spec, which gardenlet hands the chart: the SeedSpec itself, through
// JSON) declares the Extension backup-<provider> and does not disable it, and the landscape's
// seedConfigDefaults as --seed-config-defaults; the Extension's providerConfig never reaches the
// pods (a change of it must not roll them), and no ConfigMap of settings is rendered.
func TestSeedExtensionFromGardenletsValues(t *testing.T) {
	const defaults = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["TLSOnlyPolicy"],"kind":"BackupBucketConfig"}`
	seedWith := func(exts ...gardencorev1beta1.Extension) map[string]any {
		return map[string]any{"gardener": map[string]any{"seed": map[string]any{"name": "aws-eu1", "spec": gardencorev1beta1.SeedSpec{Extensions: exts}}}}
	}
	providerConfig := func(v string) *runtime.RawExtension {
		return &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","backupFreshness":{"fullSnapshotMaxAge":"` + v + `"}}`)}
	}
	rendered := func(v map[string]any) (args []string, kinds []string) {
		t.Helper()
		objs, err := render(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			kinds = append(kinds, o.GetKind())
			if o.GetKind() == "Deployment" {
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				for _, a := range containers[0].(map[string]any)["args"].([]any) {
					args = append(args, a.(string))
				}
			}
		}
		return args, kinds
	}
	declared := "--seed-extension-declared=true"
	for _, c := range []struct {
		name   string
		values map[string]any
		want   bool
	}{
		{"declared", seedWith(gardencorev1beta1.Extension{Type: "backup-aws", ProviderConfig: providerConfig("49h")}), true},
		{"declared without providerConfig", seedWith(gardencorev1beta1.Extension{Type: "backup-aws"}), true},
		{"disabled", seedWith(gardencorev1beta1.Extension{Type: "backup-aws", Disabled: new(true)}), false},
		{"another provider's", seedWith(gardencorev1beta1.Extension{Type: "backup-gcp"}), false},
		{"none", seedWith(), false},
		{"no seed", map[string]any{}, false},
	} {
		args, kinds := rendered(c.values)
		if slices.Contains(args, declared) != c.want {
			t.Errorf("%s: args %v; want %s: %v", c.name, args, declared, c.want)
		}
		if slices.Contains(kinds, "ConfigMap") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--seed-config-defaults") }) {
			t.Errorf("%s: kinds %v, args %v; want no ConfigMap and no defaults", c.name, kinds, args)
		}
	}
	a, _ := rendered(seedWith(gardencorev1beta1.Extension{Type: "backup-aws", ProviderConfig: providerConfig("49h")}))
	b, _ := rendered(seedWith(gardencorev1beta1.Extension{Type: "backup-aws", ProviderConfig: providerConfig("50h")}))
	if !slices.Equal(a, b) {
		t.Errorf("a change of the Extension's providerConfig changed the pods' args: %v -> %v", a, b)
	}
	v := seedWith()
	v["seedConfigDefaults"] = map[string]any{"apiVersion": "aws.backup.extensions.gardener.cloud/v1alpha1", "kind": "BackupBucketConfig", "disabledSettings": []any{"TLSOnlyPolicy"}}
	if args, _ := rendered(v); !slices.Contains(args, "--seed-config-defaults="+defaults) {
		t.Errorf("args %v; want --seed-config-defaults=%s", args, defaults)
	}
}

// TestNoEtcdWebhook: nothing of the chart serves or registers a webhook on Etcds; the role may
// only read and delete the configuration earlier versions registered (pkg/etcdendpoint).
func TestNoEtcdWebhook(t *testing.T) {
	objs, err := render(map[string]any{"provider": "gcp"})
	if err != nil {
		t.Fatal(err)
	}
	var configRules []string
	for _, o := range objs {
		switch o.GetKind() {
		case "Service":
			if o.GetName() == etcdendpoint.ConfigName("gcp") {
				t.Errorf("Service %s: earlier versions' webhook Service is rendered", o.GetName())
			}
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			if args := fmt.Sprint(containers[0].(map[string]any)["args"]); strings.Contains(args, "webhook") {
				t.Errorf("args %s configure a webhook", args)
			}
		case "ClusterRole":
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				if r := r.(map[string]any); strings.Contains(fmt.Sprint(r["resources"]), "webhookconfigurations") {
					configRules = append(configRules, fmt.Sprint(r["resources"], r["resourceNames"], r["verbs"]))
				}
			}
		}
	}
	want := fmt.Sprintf("[mutatingwebhookconfigurations] [%s] [get delete]", etcdendpoint.ConfigName("gcp"))
	if len(configRules) != 1 || configRules[0] != want {
		t.Fatalf("rules on webhook configurations %q; want only %q", configRules, want)
	}
}

func TestValuesSchemaRefusesBadValues(t *testing.T) {
	cases := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown provider", map[string]any{"provider": "alicloud"}, "provider"},
		{"no replicas", map[string]any{"replicaCount": 0}, "replicaCount"},
		{"unknown extension class", map[string]any{"controllers": map[string]any{"concurrentSyncs": 5, "deletionParallelism": 8, "extensionClasses": []string{"cluster"}}}, "extensionClasses"},
		{"zero deletion parallelism", map[string]any{"controllers": map[string]any{"concurrentSyncs": 5, "deletionParallelism": 0}}, "deletionParallelism"},
		{"misspelt key", map[string]any{"replicas": 2}, "replicas"},
		{"no API rate", map[string]any{"kubeAPI": map[string]any{"qps": 0, "burst": 10}}, "qps"},
		{"log level", map[string]any{"logLevel": "verbose"}, "logLevel"},
		{"the admission's values (its own charts now)", map[string]any{"admission": map[string]any{"enabled": true}}, "admission"},
		{"restore drill interval", map[string]any{"restoreDrill": map[string]any{"interval": "daily"}}, "interval"},
		{"restore drill concurrency", map[string]any{"restoreDrill": map[string]any{"concurrency": 0}}, "concurrency"},
		{"restore drill scratch size", map[string]any{"restoreDrill": map[string]any{"scratchSizeLimit": "lots"}}, "scratchSizeLimit"},
		{"restore drill misspelt key", map[string]any{"restoreDrill": map[string]any{"maxByte": 1}}, "maxByte"},
		{"the retired Etcd webhook's values", map[string]any{"etcdEndpointWebhook": map[string]any{"enabled": false}}, "etcdEndpointWebhook"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("render: %v; want a schema error naming %s", err, c.want)
			}
		})
	}
}

func TestArchiveIsTheChart(t *testing.T) {
	archive, err := charts.Archive()
	if err != nil {
		t.Fatal(err)
	}
	r := chartrenderer.NewWithServerVersion(&version.Info{Major: "1", Minor: "36"})
	rendered, err := r.RenderArchive(archive, "backup", "extension-backup", map[string]any{"provider": "gcp"})
	if err != nil {
		t.Fatalf("the archive in ControllerDeployment.helm.rawChart does not render: %v", err)
	}
	if !strings.Contains(string(rendered.Manifest()), "gardener-extension-backup-gcp") {
		t.Fatal("the archive rendered without the provider's binary")
	}
}

func TestExamplesAreGeneratedFromTheChart(t *testing.T) {
	examples := map[string]map[string][]byte{}
	var err error
	for _, p := range charts.Providers {
		if examples[p], err = charts.Examples(p); err != nil {
			t.Fatal(err)
		}
	}
	if examples["admission"], err = charts.AdmissionExamples(); err != nil {
		t.Fatal(err)
	}
	for dir, files := range examples {
		for name, want := range files {
			got, err := os.ReadFile("../example/" + dir + "/" + name)
			if err != nil || string(got) != string(want) {
				t.Errorf("example/%s/%s is stale or missing (%v): run make examples", dir, name, err)
			}
		}
	}
}

func TestExampleResourcesAreValid(t *testing.T) {
	apis := all.APIs()
	ctx := context.Background()
	for _, p := range charts.Providers {
		t.Run(p, func(t *testing.T) {
			bb, be := &extensionsv1alpha1.BackupBucket{}, &extensionsv1alpha1.BackupEntry{}
			for file, obj := range map[string]client.Object{"secret-backupbucket.yaml": &corev1.Secret{}, "backupbucket.yaml": bb, "secret-backupentry.yaml": &corev1.Secret{}, "backupentry.yaml": be} {
				data, err := os.ReadFile("../example/" + p + "/" + file)
				if err != nil {
					t.Fatal(err)
				}
				if err := sigsyaml.UnmarshalStrict(data, obj); err != nil {
					t.Fatalf("example/%s/%s: %v", p, file, err)
				}
				obj.SetResourceVersion("")
				if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
					t.Errorf("example/%s/%s is refused by the API server: %v", p, file, err)
				}
			}
			if bb.Spec.Type != p || be.Spec.Type != p || be.Spec.BucketName != bb.Name {
				t.Errorf("example/%s: types %s/%s, entry bucket %s; want %s and the bucket's name", p, bb.Spec.Type, be.Spec.Type, be.Spec.BucketName, p)
			}
			var raw []byte
			if bb.Spec.ProviderConfig != nil {
				raw = bb.Spec.ProviderConfig.Raw
			}
			if _, err := apis[p].DecodeBucketConfig(raw); err != nil {
				t.Errorf("example/%s/backupbucket.yaml: %v", p, err)
			}
		})
	}
}

// TestSchemaListsTheProviders: the values schema's provider enum is the one list of providers.
func TestSchemaListsTheProviders(t *testing.T) {
	raw, err := charts.FS.ReadFile(charts.ChartPath + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Provider struct {
				Enum []string `json:"enum"`
			} `json:"provider"`
		} `json:"properties"`
	}
	if err := sigsyaml.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if got, want := schema.Properties.Provider.Enum, all.Types(); !slices.Equal(got, want) {
		t.Errorf("values.schema.json lists providers %q; pkg/provider/all lists %q", got, want)
	}
}
