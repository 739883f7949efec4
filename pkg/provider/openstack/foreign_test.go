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
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
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
	final := b
	final.HandBackComplete = true // the BackupBucket controller's pass that completes the hand-back
	if err := back.EnsureBucket(ctx, final); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	check("after the hand-back", true)
	// This extension's marks leave with the hand-back (issue 43), and a further reconcile with
	// handBack does not adopt the container again.
	for _, stage := range []string{"after the hand-back", "after a second reconcile with handBack"} {
		if stage != "after the hand-back" {
			if err := back.EnsureBucket(ctx, b); err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
			check(stage, true)
		}
		for _, k := range []string{osprovider.MetaBucket, osprovider.MetaAdoptedFrom} {
			if v, ok := readState(t, sc, name).meta[k]; ok {
				t.Errorf("%s: the container keeps this extension's metadata %s=%s", stage, k, v)
			}
		}
	}
	planner := back.Management.(objectstore.BucketPlanner)
	if got := conformance.Plan(ctx, t, planner, b); len(got) != 0 {
		t.Fatalf("plan after the hand-back: %v; want nothing", got)
	}
}

// TestPlanBucketIsWhatEnsureBucketDoes: a missing container is one change and is not created;
// after EnsureBucket nothing is planned; a public grant and versioning switched on by hand are
// named, twice (the plan writes nothing), and EnsureBucket then leaves nothing to plan.
func TestPlanBucketIsWhatEnsureBucketDoes(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	store := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{})
	planner, ok := store.Management.(objectstore.BucketPlanner)
	if !ok {
		t.Fatalf("%T does not implement objectstore.BucketPlanner", store.Management)
	}
	b := objectstore.Bucket{Name: name, Region: "RegionOne"}
	plan := func() []string { return conformance.Plan(ctx, t, planner, b) }
	if got := plan(); len(got) != 1 || got[0] != "create container" {
		t.Fatalf("plan of a missing container: %v", got)
	}
	if err := containers.Get(ctx, sc, name, nil).Err; err == nil {
		t.Fatal("PlanBucket created the container")
	}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket: %v; want nothing", got)
	}
	on, read := true, "demo:audit,.r:*"
	if _, err := containers.Update(ctx, sc, name, containers.UpdateOpts{ContainerRead: &read, VersionsEnabled: &on}).Extract(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, want := plan(), []string{"update read ACL", "update versioning"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("plan with drift: %v; want %v", got, want)
		}
	}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket corrected the drift: %v; want nothing", got)
	}
	if got := readState(t, sc, name); got.read != "demo:audit" {
		t.Fatalf("read ACL %q; want the grant to demo:audit kept", got.read)
	}
}

// TestHandBackKeepsTheMarksUntilTheControllerCompletes: this extension's container marks stay
// in a hand-back pass the BackupBucket controller still waits on (objectstore.Bucket
// HandBackComplete unset) and while generatedCredentials is declared beside handBack (which the
// decoder refuses; the management plane guards it all the same), so that unsetting handBack then
// finds the container still this extension's, not adopted again; the completing pass removes
// them, and a later reconcile with handBack leaves the container as it is.
func TestHandBackKeepsTheMarksUntilTheControllerCompletes(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	b := objectstore.Bucket{Name: name, Region: "RegionOne"}
	final := b
	final.HandBackComplete = true
	marked := func(stage string) {
		t.Helper()
		meta := readState(t, sc, name).meta
		if meta[osprovider.MetaBucket] != name {
			t.Fatalf("%s: metadata %v; want this extension's %s=%s kept", stage, meta, osprovider.MetaBucket, name)
		}
		if v, ok := meta[osprovider.MetaAdoptedFrom]; ok {
			t.Fatalf("%s: metadata %s=%s on a container this extension made", stage, osprovider.MetaAdoptedFrom, v)
		}
	}
	store := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{})
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	declared := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{HandBack: true, GeneratedCredentials: &osapi.GeneratedCredentialsConfig{}})
	if err := declared.EnsureBucket(ctx, final); err != nil {
		t.Fatalf("hand-back with generatedCredentials declared: %v", err)
	}
	marked("while generatedCredentials is declared")
	back := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{HandBack: true})
	if err := back.EnsureBucket(ctx, b); err != nil {
		t.Fatalf("hand-back the controller still waits on: %v", err)
	}
	marked("while the controller waits")
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatalf("handBack unset meanwhile: %v; want the container still this extension's", err)
	}
	marked("after handBack was unset")
	if err := back.EnsureBucket(ctx, final); err != nil {
		t.Fatalf("completing hand-back: %v", err)
	}
	for _, stage := range []string{"after the completing pass", "after a later reconcile with handBack"} {
		if stage != "after the completing pass" {
			if err := back.EnsureBucket(ctx, b); err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
		}
		for _, k := range []string{osprovider.MetaBucket, osprovider.MetaAdoptedFrom} {
			if v, ok := readState(t, sc, name).meta[k]; ok {
				t.Errorf("%s: the container keeps this extension's metadata %s=%s", stage, k, v)
			}
		}
	}
	if got := conformance.Plan(ctx, t, back.Management.(objectstore.BucketPlanner), b); len(got) != 0 {
		t.Fatalf("plan of a later reconcile with handBack: %v; want nothing", got)
	}
}
