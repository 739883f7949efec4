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

// TestLocalMountsItsRoot: the local binary gets --local-root on a hostPath volume of the node's
// directory and that directory as --local-host-path; no other provider gets either.
func TestLocalMountsItsRoot(t *testing.T) {
	for _, p := range []string{"local", "aws"} {
		objs, err := render(map[string]any{"provider": p, "local": map[string]any{"hostPath": "/srv/buckets"}})
		if err != nil {
			t.Fatal(err)
		}
		deployments := 0
		for _, o := range objs {
			if o.GetKind() != "Deployment" {
				continue
			}
			deployments++
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			c := containers[0].(map[string]any)
			args, mounts := fmt.Sprint(c["args"]), fmt.Sprint(c["volumeMounts"])
			volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			local := p == "local"
			if got := strings.Contains(args, "--local-root=/var/local-backupbuckets") && strings.Contains(args, "--local-host-path=/srv/buckets"); got != local {
				t.Errorf("%s: args %s", p, args)
			}
			if got := strings.Contains(mounts, "/var/local-backupbuckets") && strings.Contains(fmt.Sprint(volumes), "path:/srv/buckets"); got != local {
				t.Errorf("%s: mounts %s, volumes %v", p, mounts, volumes)
			}
		}
		if deployments != 2 { // the controllers' and the restore drills' (which read the buckets too)
			t.Errorf("%s: %d Deployments rendered; want 2", p, deployments)
		}
	}
}
