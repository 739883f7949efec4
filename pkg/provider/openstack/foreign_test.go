// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestForeignSettingsSurviveTakeoverAndHandBack: an operator's grants on provider-openstack's
// container (a read ACL for an audit user, a write ACL for a project's user) are kept by the
// takeover, which removes only the public grant beside them; metadata an operator adds once the
// container is this extension's (provider-openstack's own form has none, and a container with
// metadata it did not write is not taken over) is kept by every reconcile and by the hand-back.
func TestForeignSettingsSurviveTakeoverAndHandBack(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	incumbentReconcile(t, sc, name)
	read, write := "demo:audit", "demo:writer"
	if _, err := containers.Update(ctx, sc, name, containers.UpdateOpts{ContainerRead: &[]string{read + ",.r:*,.rlistings"}[0], ContainerWrite: &write}).Extract(); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, wantMeta bool) {
		t.Helper()
		got := readState(t, sc, name)
		if got.read != read || got.write != write {
			t.Errorf("%s: read ACL %q, write ACL %q; want the operator's %q and %q kept, the public grants gone", stage, got.read, got.write, read, write)
		}
		if wantMeta && got.meta["Operator-Team"] != "storage" {
			t.Errorf("%s: metadata %v; want the operator's Operator-Team kept", stage, got.meta)
		}
	}
	store := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{})
	b := objectstore.Bucket{Name: name, Region: "RegionOne"}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	check("after the takeover", false)
	if _, err := containers.Update(ctx, sc, name, containers.UpdateOpts{Metadata: map[string]string{"Operator-Team": "storage"}}).Extract(); err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	check("after a reconcile", true)
	back := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{HandBack: true})
	if err := back.EnsureBucket(ctx, b); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	check("after the hand-back", true)
}
