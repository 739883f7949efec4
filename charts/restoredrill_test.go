// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deployments are the rendered Deployments by name.
func deployments(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	objs, err := render(values)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			out[o.GetName()] = o
		}
	}
	return out
}

// container is the Deployment's only container.
func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers", d.GetName(), len(containers))
	}
	return containers[0].(map[string]any)
}

func argsOf(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, a := range container(t, d)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// TestRestoreDrillsRunInADeploymentOfTheirOwn: with drills on, the drills run in their own
// Deployment (--controllers=restore-drill) with every drill value as its flag, its own resources
// and priority class, the HA label, and a size-limited scratch emptyDir whose limit it requests as
// ephemeral storage (the root filesystem is read-only); its pods are not the controllers'
// (disjoint selectors, a metrics Service of their own). The controllers' Deployment runs no drill
// (--controllers=core), mounts no scratch volume and takes none of the drill's flags.
func TestRestoreDrillsRunInADeploymentOfTheirOwn(t *testing.T) {
	ds := deployments(t, map[string]any{"priorityClassName": "gardener-system-900", "restoreDrill": map[string]any{
		"interval": "12h", "concurrency": 3, "maxBytes": 8589934592, "maxScratchBytes": 1073741824, "readRate": 0, "scratchSizeLimit": "2Gi",
		"deadline": "30m", "maxDeltas": 5000, "maxKeys": 20000, "priorityClassName": "gardener-system-200",
		"resources": map[string]any{"requests": map[string]any{"memory": "300Mi"}, "limits": map[string]any{"memory": "3Gi"}},
	}})
	core, drill := ds["gardener-extension-backup-aws"], ds["gardener-extension-backup-aws-restore-drill"]
	if core == nil || drill == nil || len(ds) != 2 {
		t.Fatalf("Deployments %v; want the controllers' and the drill's", slices.Collect(func(yield func(string) bool) {
			for n := range ds {
				yield(n)
			}
		}))
	}

	args := argsOf(t, drill)
	for _, want := range []string{"--controllers=restore-drill", "--restore-drill-interval=12h", "--restore-drill-concurrency=3", "--restore-drill-max-bytes=8589934592",
		"--restore-drill-max-scratch-bytes=1073741824", "--restore-drill-read-rate=0", "--restore-drill-deadline=30m", "--restore-drill-max-deltas=5000",
		"--restore-drill-max-keys=20000", "--restore-drill-scratch-dir=/var/lib/restore-drill", "--leader-election=true"} {
		if !slices.Contains(args, want) {
			t.Errorf("drill args %v lack %s", args, want)
		}
	}
	c := container(t, drill)
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	volumes, _, _ := unstructured.NestedSlice(drill.Object, "spec", "template", "spec", "volumes")
	if len(mounts) != 1 || len(volumes) != 1 {
		t.Fatalf("drill mounts %v, volumes %v", mounts, volumes)
	}
	m, v := mounts[0].(map[string]any), volumes[0].(map[string]any)
	limit, _, _ := unstructured.NestedString(v, "emptyDir", "sizeLimit")
	if m["mountPath"] != "/var/lib/restore-drill" || m["name"] != v["name"] || limit != "2Gi" {
		t.Errorf("scratch mount %v, volume %v", m, v)
	}
	res, _, _ := unstructured.NestedMap(c, "resources")
	if fmt.Sprint(res) != "map[limits:map[memory:3Gi] requests:map[cpu:50m ephemeral-storage:2Gi memory:300Mi]]" {
		t.Errorf("drill resources %v; want the values' and ephemeral-storage 2Gi", res)
	}
	if pc, _, _ := unstructured.NestedString(drill.Object, "spec", "template", "spec", "priorityClassName"); pc != "gardener-system-200" {
		t.Errorf("drill priorityClassName %q", pc)
	}
	if drill.GetLabels()["high-availability-config.resources.gardener.cloud/type"] != "controller" {
		t.Errorf("drill labels %v lack the HA type", drill.GetLabels())
	}
	if sc := c["securityContext"].(map[string]any); sc["readOnlyRootFilesystem"] != true {
		t.Errorf("drill security context %v", sc)
	}

	// The selectors do not overlap: neither Deployment adopts the other's pods.
	coreSel, _, _ := unstructured.NestedStringMap(core.Object, "spec", "selector", "matchLabels")
	drillSel, _, _ := unstructured.NestedStringMap(drill.Object, "spec", "selector", "matchLabels")
	corePods, _, _ := unstructured.NestedStringMap(core.Object, "spec", "template", "metadata", "labels")
	drillPods, _, _ := unstructured.NestedStringMap(drill.Object, "spec", "template", "metadata", "labels")
	if isSubset(coreSel, drillPods) || isSubset(drillSel, corePods) {
		t.Errorf("selectors overlap: controllers %v / drill pods %v, drill %v / controllers' pods %v", coreSel, drillPods, drillSel, corePods)
	}

	args = argsOf(t, core)
	if !slices.Contains(args, "--controllers=core") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--restore-drill") }) {
		t.Errorf("controllers' args %v; want --controllers=core and no drill flag", args)
	}
	if mounts, _, _ := unstructured.NestedSlice(container(t, core), "volumeMounts"); len(mounts) != 0 {
		t.Errorf("controllers' mounts %v; want none", mounts)
	}
	if pc, _, _ := unstructured.NestedString(core.Object, "spec", "template", "spec", "priorityClassName"); pc != "gardener-system-900" {
		t.Errorf("controllers' priorityClassName %q", pc)
	}

	// Without a priority class of its own, the drill takes the controllers'.
	ds = deployments(t, map[string]any{"priorityClassName": "gardener-system-900"})
	if pc, _, _ := unstructured.NestedString(ds["gardener-extension-backup-aws-restore-drill"].Object, "spec", "template", "spec", "priorityClassName"); pc != "gardener-system-900" {
		t.Errorf("drill priorityClassName %q; want the controllers'", pc)
	}
}

// TestRestoreDrillsOff: with interval 0 no drill Deployment is rendered, and the controllers'
// process runs with every controller and the interval 0, so that it removes what drills published.
func TestRestoreDrillsOff(t *testing.T) {
	for _, off := range []string{"0s", "0h", "0m0s"} {
		ds := deployments(t, map[string]any{"restoreDrill": map[string]any{"interval": off}})
		if len(ds) != 1 || ds["gardener-extension-backup-aws"] == nil {
			t.Fatalf("interval %s: Deployments %d; want only the controllers'", off, len(ds))
		}
		args := argsOf(t, ds["gardener-extension-backup-aws"])
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--controllers") }) || !slices.Contains(args, "--restore-drill-interval="+off) {
			t.Errorf("interval %s: args %v; want all controllers (no --controllers) and the interval", off, args)
		}
	}
}

// TestRestoreDrillValuesOutOfRange: the schema refuses a drill value the binary would refuse.
func TestRestoreDrillValuesOutOfRange(t *testing.T) {
	for _, c := range []map[string]any{
		{"deadline": "0s"}, {"deadline": "soon"}, {"maxDeltas": 0}, {"maxKeys": 0}, {"replicaCount": 0}, {"resources": map[string]any{"request": map[string]any{}}},
	} {
		if _, err := render(map[string]any{"restoreDrill": c}); err == nil {
			t.Errorf("restoreDrill %v rendered; want it refused", c)
		}
	}
}
