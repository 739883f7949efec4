// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	gardencorevalidation "github.com/gardener/gardener/pkg/api/core/validation"
	"github.com/gardener/gardener/pkg/apis/core"
	gardencoreinstall "github.com/gardener/gardener/pkg/apis/core/install"
	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corefake "github.com/gardener/gardener/pkg/client/core/clientset/versioned/fake"
	gardenerutils "github.com/gardener/gardener/pkg/utils/gardener"
	"github.com/gardener/gardener/plugin/pkg/controllerregistration/resources"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
)

// registrationIn is the ControllerRegistration among the YAML documents of file.
func registrationIn(t *testing.T, file string) *gardencorev1beta1.ControllerRegistration {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		r := &gardencorev1beta1.ControllerRegistration{}
		if err := sigsyaml.Unmarshal([]byte(doc), r); err == nil && r.Kind == "ControllerRegistration" {
			return r
		}
	}
	t.Fatalf("%s holds no ControllerRegistration", file)
	return nil
}

// incumbentRegistration is provider's incumbent's own example registration, at the version
// test/incumbent/<provider> requires, from the module cache (make test has downloaded it).
func incumbentRegistration(t *testing.T, provider string) *gardencorev1beta1.ControllerRegistration {
	t.Helper()
	mod, err := os.ReadFile("../test/incumbent/" + provider + "/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github.com/gardener/gardener-extension-provider-` + provider + ` (v[0-9.]+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("test/incumbent/%s/go.mod requires no provider-%s", provider, provider)
	}
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(cache)), "github.com/gardener/gardener-extension-provider-"+provider+"@"+string(m[1]))
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("provider-%s %s is not in the module cache (make test downloads it with hack/incumbent.sh): %v", provider, m[1], err)
	}
	return registrationIn(t, filepath.Join(dir, "example", "controller-registration.yaml"))
}

// internal is r in gardener's internal API, which its validation and admission take.
func internal(t *testing.T, r *gardencorev1beta1.ControllerRegistration) *core.ControllerRegistration {
	t.Helper()
	scheme := runtime.NewScheme()
	gardencoreinstall.Install(scheme)
	out := &core.ControllerRegistration{}
	if err := scheme.Convert(r, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// admit runs gardener's admission plugin ControllerRegistrationResources on the creation of r
// with existing registered.
func admit(t *testing.T, r *gardencorev1beta1.ControllerRegistration, existing ...*gardencorev1beta1.ControllerRegistration) error {
	t.Helper()
	var objs []runtime.Object
	for _, e := range existing {
		objs = append(objs, e)
	}
	plugin, err := resources.New()
	if err != nil {
		t.Fatal(err)
	}
	plugin.SetCoreClientSet(corefake.NewSimpleClientset(objs...))
	plugin.AssignReadyFunc(func() bool { return true })
	attrs := admission.NewAttributesRecord(internal(t, r), nil, core.Kind("ControllerRegistration").WithVersion("version"), "", r.Name,
		core.Resource("controllerregistrations").WithVersion("version"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	return plugin.Validate(context.Background(), attrs, nil)
}

// TestRehearsalRegistrationBesideTheIncumbent: gardener's validation and its admission of
// ControllerRegistrations accept the rehearsal's registration beside the incumbent's own (which
// stays primary for BackupBucket and BackupEntry), for each incumbent whose module is here; the
// rehearsal's chart values say rehearse; and the registration of the switch is refused while
// the rehearsal's exists (both primary for the seed's Extension), as its header says.
func TestRehearsalRegistrationBesideTheIncumbent(t *testing.T) {
	for _, p := range []string{"aws", "gcp"} {
		t.Run(p, func(t *testing.T) {
			rehearsal := registrationIn(t, "../example/"+p+"/rehearsal-registration.yaml")
			if errs := gardencorevalidation.ValidateControllerRegistration(internal(t, rehearsal)); len(errs) > 0 {
				t.Fatalf("gardener's validation refuses the rehearsal registration: %v", errs.ToAggregate())
			}
			incumbent := incumbentRegistration(t, p)
			for _, res := range incumbent.Spec.Resources {
				if (res.Kind == "BackupBucket" || res.Kind == "BackupEntry") && res.Primary != nil && !*res.Primary {
					t.Fatalf("the incumbent's example is not primary for %s", res.Kind)
				}
			}
			if err := admit(t, rehearsal, incumbent); err != nil {
				t.Fatalf("gardener's admission refuses the rehearsal registration beside provider-%s's: %v", p, err)
			}
			ours := registrationIn(t, "../example/"+p+"/controller-registration.yaml")
			if err := admit(t, ours, rehearsal); err == nil || !strings.Contains(err.Error(), "Extension/backup-"+p) {
				t.Fatalf("the switch's registration beside the rehearsal's: %v; want it refused for Extension/backup-%s", err, p)
			}
		})
	}
	_, registration, err := charts.RehearsalRegistration("aws", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range registration.Spec.Resources {
		if res.Kind != "Extension" {
			t.Fatalf("the rehearsal registers %s/%s: gardener would install it in every seed that uses the type", res.Kind, res.Type)
		}
	}
}

// TestRehearsalValues: rehearse: true renders the flag, names of its own (beside the release
// that takes over, cluster-scoped names must not collide), the image of the provider, and RBAC
// that writes no BackupBucket, BackupEntry or secret.
func TestRehearsalValues(t *testing.T) {
	objs, err := render(map[string]any{"provider": "aws", "rehearse": true})
	if err != nil {
		t.Fatal(err)
	}
	var sawFlag, sawImage bool
	for _, o := range objs {
		if !strings.Contains(o.GetName(), "gardener-extension-backup-aws-rehearsal") {
			t.Errorf("%s %s: not named as the rehearsal's", o.GetKind(), o.GetName())
		}
		y, _ := sigsyaml.Marshal(o.Object)
		if o.GetKind() == "Deployment" {
			sawFlag = strings.Contains(string(y), "--rehearse=true")
			sawImage = strings.Contains(string(y), "/gardener-extension-backup-aws:")
		}
		if o.GetKind() != "ClusterRole" {
			continue
		}
		for _, r := range rulesOf(o.Object) {
			for _, res := range r.resources {
				if (strings.HasPrefix(res, "backup") || res == "secrets") && !onlyReads(r.verbs) {
					t.Errorf("the rehearsal's ClusterRole may %v %s", r.verbs, res)
				}
			}
		}
	}
	if !sawFlag || !sawImage {
		t.Fatalf("the Deployment: --rehearse=true %v, the provider's image %v", sawFlag, sawImage)
	}
}

type rule struct{ resources, verbs []string }

func rulesOf(obj map[string]any) []rule {
	raw, _ := obj["rules"].([]any)
	var out []rule
	for _, r := range raw {
		m, _ := r.(map[string]any)
		out = append(out, rule{resources: stringsOf(m["resources"]), verbs: stringsOf(m["verbs"])})
	}
	return out
}

func stringsOf(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

func onlyReads(verbs []string) bool {
	for _, v := range verbs {
		if v != "get" && v != "list" && v != "watch" {
			return false
		}
	}
	return true
}

// TestRehearsalGetsTheGardenKubeconfig: the rehearsal's ControllerDeployment asks gardenlet for a
// garden kubeconfig, and gardenlet's own injection (gardenerutils.InjectGenericGardenKubeconfig)
// reaches every container of the rehearsal's Deployments: none opts out by label or sets
// GARDEN_KUBECONFIG itself (which would make gardenlet skip the volume).
func TestRehearsalGetsTheGardenKubeconfig(t *testing.T) {
	for _, p := range charts.Providers {
		data, err := os.ReadFile("../example/" + p + "/rehearsal-registration.yaml")
		if err != nil {
			t.Fatal(err)
		}
		deployment := &gardencorev1.ControllerDeployment{}
		if err := sigsyaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), deployment); err != nil || deployment.Kind != "ControllerDeployment" {
			t.Fatalf("example/%s/rehearsal-registration.yaml starts with no ControllerDeployment (%v)", p, err)
		}
		if deployment.InjectGardenKubeconfig == nil || !*deployment.InjectGardenKubeconfig {
			t.Errorf("example/%s/rehearsal-registration.yaml: injectGardenKubeconfig %v; want true", p, deployment.InjectGardenKubeconfig)
		}
	}
	objs, err := render(map[string]any{"provider": "aws", "rehearse": true})
	if err != nil {
		t.Fatal(err)
	}
	deployments := 0
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		deployments++
		if v, ok := o.GetLabels()[v1beta1constants.LabelInjectGardenKubeconfig]; ok && v != "true" {
			t.Errorf("Deployment %s opts out of the garden kubeconfig (label %s=%s)", o.GetName(), v1beta1constants.LabelInjectGardenKubeconfig, v)
		}
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
			t.Fatal(err)
		}
		if err := gardenerutils.InjectGenericGardenKubeconfig(d, "generic-garden-kubeconfig", "garden-access-extension", gardenerutils.VolumeMountPathGenericGardenKubeconfig); err != nil {
			t.Fatal(err)
		}
		if len(d.Spec.Template.Spec.Volumes) == 0 || d.Spec.Template.Spec.Volumes[len(d.Spec.Template.Spec.Volumes)-1].Name != "garden-kubeconfig" {
			t.Errorf("Deployment %s: gardenlet's injection added no garden-kubeconfig volume", o.GetName())
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == v1beta1constants.EnvGenericGardenKubeconfig }) {
				t.Errorf("Deployment %s, container %s: no %s after gardenlet's injection", o.GetName(), c.Name, v1beta1constants.EnvGenericGardenKubeconfig)
			}
		}
	}
	if deployments == 0 {
		t.Fatal("the rehearsal's chart renders no Deployment")
	}
}
