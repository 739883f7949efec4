// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// releaseNamespace is where stack.StartExtension's processes elect their leader: the chart is
// rendered into it, so that the drill's Role for its lease is where the lease is.
const releaseNamespace = "garden"

// startDrillAsTheChart starts bin's binary as the chart's restore-drill Deployment runs it
// (--controllers=restore-drill, with flags) under the chart's restore-drill ServiceAccount and
// nothing else: the chart's RBAC is applied and the process authenticates as that account. It
// first checks that the account may write neither a secret nor a BackupBucket nor a
// BackupEntry's spec or finalizers: a drill restores what a shoot's control plane wrote.
func startDrillAsTheChart(t *testing.T, ctx context.Context, bin *framework.Binary, flags ...string) *stack.Extension {
	t.Helper()
	objs, err := charts.Render(releaseNamespace, map[string]any{"provider": "aws"})
	if err != nil {
		t.Fatal(err)
	}
	bin.EnsureNamespace(t, releaseNamespace)
	if err := framework.ApplyChartRBAC(ctx, bin.K8s, objs, nil); err != nil {
		t.Fatal(err)
	}
	var sa string
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == "gardener-extension-backup-aws-restore-drill" {
			sa = o.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["serviceAccountName"].(string)
		}
	}
	if sa == "" || sa == "gardener-extension-backup-aws" {
		t.Fatalf("the restore-drill Deployment runs as %q; want a ServiceAccount of its own", sa)
	}
	user := framework.ServiceAccountUser(releaseNamespace, sa)
	for _, forbidden := range []authorizationv1.ResourceAttributes{
		{Verb: "create", Resource: "secrets", Namespace: "shoot--a--b"},
		{Verb: "update", Resource: "secrets", Namespace: "shoot--a--b"},
		{Verb: "delete", Resource: "secrets", Namespace: "shoot--a--b"},
		{Verb: "list", Resource: "secrets"},
		{Verb: "update", Group: "extensions.gardener.cloud", Resource: "backupbuckets"},
		{Verb: "patch", Group: "extensions.gardener.cloud", Resource: "backupbuckets", Subresource: "status"},
		{Verb: "patch", Group: "extensions.gardener.cloud", Resource: "backupentries"},
		{Verb: "update", Group: "extensions.gardener.cloud", Resource: "backupentries", Subresource: "finalizers"},
		{Verb: "patch", Group: "extensions.gardener.cloud", Resource: "extensions", Subresource: "status"},
	} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace, "system:authenticated"},
			ResourceAttributes: &forbidden,
		}}
		if err := bin.K8s.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed {
			t.Errorf("the restore drills' account may %s %s/%s", forbidden.Verb, forbidden.Resource, forbidden.Subresource)
		}
	}
	dir := t.TempDir()
	identity := envtest.User{Name: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace}}
	ext, err := stack.StartExtensionAs(ctx, bin.TestEnv, identity, bin.Path, dir, append([]string{"--controllers=restore-drill"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ext.Stop()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Clean(ext.LogPath)); err == nil {
				t.Logf("restore drill log:\n%s", log)
			}
		}
	})
	return ext
}
