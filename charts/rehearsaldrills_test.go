// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRehearsalRestoreDrills: a rehearsal release drills only with rehearsal.restoreDrills, in its
// own Deployment (never a drill Deployment), with the drills' caps as flags and a size-limited
// scratch emptyDir; a release that takes over ignores the value.
func TestRehearsalRestoreDrills(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		drills bool
	}{
		{"rehearsal, drills on", map[string]any{"rehearse": true, "rehearsal": map[string]any{"restoreDrills": true}, "restoreDrill": map[string]any{"deadline": "20m", "scratchSizeLimit": "3Gi",
			"resources": map[string]any{"requests": map[string]any{"memory": "300Mi"}, "limits": map[string]any{"memory": "3Gi"}}}}, true},
		{"rehearsal, drills off by default", map[string]any{"rehearse": true}, false},
		{"takeover ignores it", map[string]any{"rehearsal": map[string]any{"restoreDrills": true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := deployments(t, tc.values)
			name := "gardener-extension-backup-aws"
			if tc.values["rehearse"] == true {
				name += "-rehearsal"
				if len(ds) != 1 {
					t.Fatalf("deployments %v; want the rehearsal's only", keys(ds))
				}
			}
			d, ok := ds[name]
			if !ok {
				t.Fatalf("no Deployment %s among %v", name, keys(ds))
			}
			args := argsOf(t, d)
			hasFlag := slices.Contains(args, "--rehearsal-restore-drills=true")
			if hasFlag != tc.drills {
				t.Fatalf("args %v: --rehearsal-restore-drills=true %v; want %v", args, hasFlag, tc.drills)
			}
			// A drilling rehearsal's container gets a drill container's resources (the drill
			// runs in it); else the controllers'.
			wantResources := "map[limits:map[memory:1Gi] requests:map[cpu:50m memory:64Mi]]"
			if tc.drills {
				wantResources = "map[limits:map[memory:3Gi] requests:map[cpu:50m ephemeral-storage:3Gi memory:300Mi]]"
			}
			if res := fmt.Sprint(container(t, d)["resources"]); res != wantResources {
				t.Errorf("resources %s; want %s", res, wantResources)
			}
			volumes := fmt.Sprint(d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"])
			if !tc.drills {
				if strings.Contains(volumes, "restore-drill") {
					t.Fatalf("volumes %s: a scratch volume without drills", volumes)
				}
				return
			}
			for _, want := range []string{"--restore-drill-deadline=20m", "--restore-drill-scratch-dir=/var/lib/restore-drill", "--restore-drill-max-bytes=4294967296", "--restore-drill-max-keys=100000"} {
				if !slices.Contains(args, want) {
					t.Errorf("args %v lack %s", args, want)
				}
			}
			if !strings.Contains(volumes, "restore-drill") || !strings.Contains(volumes, "3Gi") {
				t.Errorf("volumes %s: want the scratch emptyDir of 3Gi", volumes)
			}
			if mounts := fmt.Sprint(container(t, d)["volumeMounts"]); !strings.Contains(mounts, "/var/lib/restore-drill") {
				t.Errorf("mounts %s: want the scratch volume at /var/lib/restore-drill", mounts)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
