// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The restore drill's values reach the controllers' flags, and its scratch directory is a
// size-limited emptyDir (the root filesystem is read-only).
func TestRestoreDrillValues(t *testing.T) {
	objs, err := render(map[string]any{"restoreDrill": map[string]any{
		"interval": "12h", "concurrency": 3, "maxBytes": 8589934592, "maxScratchBytes": 1073741824, "readRate": 0, "scratchSizeLimit": "2Gi",
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		args := fmt.Sprint(c["args"])
		for _, want := range []string{"--restore-drill-interval=12h", "--restore-drill-concurrency=3", "--restore-drill-max-bytes=8589934592 ",
			"--restore-drill-max-scratch-bytes=1073741824 ", "--restore-drill-read-rate=0 ", "--restore-drill-scratch-dir=/var/lib/restore-drill"} {
			if !strings.Contains(args, want) {
				t.Errorf("args %s lack %s", args, want)
			}
		}
		mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
		volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
		if len(mounts) != 1 || len(volumes) != 1 {
			t.Fatalf("mounts %v, volumes %v", mounts, volumes)
		}
		m, v := mounts[0].(map[string]any), volumes[0].(map[string]any)
		limit, _, _ := unstructured.NestedString(v, "emptyDir", "sizeLimit")
		if m["mountPath"] != "/var/lib/restore-drill" || m["name"] != v["name"] || limit != "2Gi" {
			t.Errorf("scratch mount %v, volume %v", m, v)
		}
		return
	}
	t.Fatal("no Deployment rendered")
}
