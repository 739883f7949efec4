// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// installVPACRD installs the VerticalPodAutoscaler CRD gardener ships (every seed and garden
// runtime cluster has VPA), so that the chart's VPA is checked by the API server too.
func installVPACRD(cfg *rest.Config) error {
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/gardener")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("locating the gardener module: %w", err)
	}
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(strings.TrimSpace(string(out)), "example", "seed-crds", "10-crd-autoscaling.k8s.io_verticalpodautoscalers.yaml")},
		ErrorIfPathMissing: true,
	})
	return err
}

// byKind returns the rendered objects by kind, the restore drills' workload left out (it has tests
// of its own).
func byKind(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if !strings.HasSuffix(o.GetName(), "-restore-drill") {
			out[o.GetKind()] = o
		}
	}
	return out
}

func str(o *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// TestGardenersProductionConventions: the controller Deployment follows gardener's extensions'
// charts (provider-aws v1.73.0): gardener's priority class for seed system components (the garden
// runtime cluster's when gardener-operator deploys it there), the HA config type label by which
// gardener's HA config webhook sets its replicas and topology spread constraints (so the chart sets
// none itself), a PDB that lets unhealthy pods be evicted, and a VPA on the controller container's
// CPU and memory requests.
func TestGardenersProductionConventions(t *testing.T) {
	objs, err := render(map[string]any{"provider": "aws"})
	if err != nil {
		t.Fatal(err)
	}
	k := byKind(objs)
	d := k["Deployment"]
	if got := str(d, "metadata", "labels", "high-availability-config.resources.gardener.cloud/type"); got != "controller" {
		t.Errorf("HA config type %q; want controller", got)
	}
	if got := str(d, "spec", "template", "spec", "priorityClassName"); got != "gardener-system-900" {
		t.Errorf("priorityClassName %q; want gardener-system-900", got)
	}
	if got := str(d, "spec", "template", "spec", "topologySpreadConstraints"); got != "" {
		t.Errorf("topologySpreadConstraints %s; gardener's HA config webhook sets them", got)
	}
	if got := str(k["PodDisruptionBudget"], "spec", "unhealthyPodEvictionPolicy"); got != "AlwaysAllow" {
		t.Errorf("PDB unhealthyPodEvictionPolicy %q; want AlwaysAllow", got)
	}
	vpa := k["VerticalPodAutoscaler"]
	if vpa == nil {
		t.Fatal("no VerticalPodAutoscaler by default")
	}
	if got := str(vpa, "spec", "updatePolicy", "updateMode"); got != "Recreate" {
		t.Errorf("VPA updateMode %q; want Recreate", got)
	}
	policies, _, _ := unstructured.NestedSlice(vpa.Object, "spec", "resourcePolicy", "containerPolicies")
	if got := fmt.Sprint(policies); got != "[map[containerName:gardener-extension-backup-aws controlledResources:[memory cpu] controlledValues:RequestsOnly] map[containerName:* mode:Off]]" {
		t.Errorf("VPA container policies %s", got)
	}

	objs, err = render(map[string]any{"provider": "aws", "gardener": map[string]any{"runtimeCluster": map[string]any{"enabled": "true", "priorityClassName": "gardener-garden-system-200"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		if got := str(o, "spec", "template", "spec", "priorityClassName"); got != "gardener-garden-system-200" {
			t.Errorf("in the garden runtime cluster: Deployment %s's priorityClassName %q; want gardener-operator's gardener-garden-system-200", o.GetName(), got)
		}
	}
	objs, err = render(map[string]any{"provider": "aws", "vpa": map[string]any{"enabled": false}, "priorityClassName": ""})
	if err != nil {
		t.Fatal(err)
	}
	if k := byKind(objs); k["VerticalPodAutoscaler"] != nil || str(k["Deployment"], "spec", "template", "spec", "priorityClassName") != "" {
		t.Error("vpa.enabled false or an empty priorityClassName still rendered")
	}
}
