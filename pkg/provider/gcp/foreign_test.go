// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gcsiam "cloud.google.com/go/iam"
	"cloud.google.com/go/storage"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// operatorRule is an operator's lifecycle rule under reports/.
var operatorRule = storage.LifecycleRule{Action: storage.LifecycleAction{Type: storage.DeleteAction},
	Condition: storage.LifecycleCondition{AgeInDays: 400, MatchesPrefix: []string{"reports/"}}}

const (
	operatorLabel  = "cost-center"
	operatorMember = "group:audit@example.com"
	operatorRole   = "roles/storage.objectViewer"
)

// plan is PlanBucket of the bucket with cfg, as "action setting".
func plan(t *testing.T, name string, cfg *gcpapi.BackupBucketConfig) []string {
	t.Helper()
	return planOf(t, objectstore.Bucket{Name: name, Region: region}, cfg)
}

// planFinal is plan for the BackupBucket controller's pass that completes a hand-back.
func planFinal(t *testing.T, name string, cfg *gcpapi.BackupBucketConfig) []string {
	t.Helper()
	return planOf(t, objectstore.Bucket{Name: name, Region: region, HandBackComplete: true}, cfg)
}

func planOf(t *testing.T, b objectstore.Bucket, cfg *gcpapi.BackupBucketConfig) []string {
	t.Helper()
	m := gcpprovider.WithConfig(newStore(t, gcs.SecretData()).DataPlane, cfg)
	planner, ok := m.(objectstore.BucketPlanner)
	if !ok {
		t.Fatalf("%T does not implement objectstore.BucketPlanner", m)
	}
	return conformance.Plan(ctxFor(t), t, planner, b)
}

// TestForeignSettingsSurviveTakeoverAndHandBack: an operator's label and IAM binding on
// provider-gcp's bucket, and an operator's lifecycle rule added once the bucket is this
// extension's (provider-gcp's own reconcile keeps no rule but its one), are kept by the takeover,
// by every reconcile and by the hand-back; after each, PlanBucket finds nothing to change.
func TestForeignSettingsSurviveTakeoverAndHandBack(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s, c := newStore(t, data), rawClient(t, data)
	name := newBucketName()
	incumbentBucket(t, c, name, 24*time.Hour)
	upd := storage.BucketAttrsToUpdate{}
	upd.SetLabel(operatorLabel, "backup-audit")
	if _, err := c.Bucket(name).Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	h := c.Bucket(name).IAM()
	policy, err := h.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	policy.Add(operatorMember, gcsiam.RoleName(operatorRole))
	if err := h.SetPolicy(ctx, policy); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, withRule bool) {
		t.Helper()
		attrs, err := c.Bucket(name).Attrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if attrs.Labels[operatorLabel] != "backup-audit" {
			t.Errorf("%s: labels %v; want the operator's %s kept", stage, attrs.Labels, operatorLabel)
		}
		if withRule && !slices.ContainsFunc(attrs.Lifecycle.Rules, func(r storage.LifecycleRule) bool {
			return slices.Equal(r.Condition.MatchesPrefix, []string{"reports/"})
		}) {
			t.Errorf("%s: lifecycle %v; want the operator's rule kept", stage, attrs.Lifecycle.Rules)
		}
		p, err := h.Policy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !p.HasRole(operatorMember, gcsiam.RoleName(operatorRole)) {
			t.Errorf("%s: the operator's IAM binding %s %s is gone", stage, operatorRole, operatorMember)
		}
	}
	cfg := immutable(24*time.Hour, false)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	check("after the takeover", false)
	if got := plan(t, name, cfg); len(got) != 0 {
		t.Fatalf("plan after the takeover: %v; want nothing", got)
	}
	attrs, err := c.Bucket(name).Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bucket(name).Update(ctx, storage.BucketAttrsToUpdate{Lifecycle: &storage.Lifecycle{Rules: append(attrs.Lifecycle.Rules, operatorRule)}}); err != nil {
		t.Fatal(err)
	}
	if got := plan(t, name, cfg); len(got) != 0 {
		t.Fatalf("plan with the operator's rule: %v; want nothing (it is not ours)", got)
	}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	check("after a reconcile", true)
	back := immutable(24*time.Hour, false)
	back.HandBack = true
	want := []string{`delete lifecycle rule "AbortIncompleteMultipartUpload if age 7 days, the whole bucket"`, "delete label " + gcpapi.AbortRuleLabel, "delete label " + gcpprovider.AdoptedLabel, "delete label " + gcpapi.ManagedLabel}
	if got := planFinal(t, name, back); len(got) != len(want) || !strings.HasPrefix(got[0], "delete lifecycle rule") || !slices.Equal(got[1:], want[1:]) {
		t.Fatalf("plan of the hand-back: %v; want our abort rule and our labels deleted alone, like %v", got, want)
	}
	if err := ensureFinal(t, s, name, back); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	check("after the hand-back", true)
	// Read back: no label of ours is left, the operator's is kept (check).
	attrs, err = c.Bucket(name).Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{gcpapi.ManagedLabel, gcpapi.AbortRuleLabel, gcpprovider.AdoptedLabel} {
		if v, ok := attrs.Labels[k]; ok {
			t.Errorf("after the hand-back the bucket keeps this extension's label %s=%s", k, v)
		}
	}
	if got := plan(t, name, back); len(got) != 0 {
		t.Fatalf("plan after the hand-back: %v; want nothing", got)
	}
}

// TestPlanBucketIsWhatEnsureBucketDoes: a missing bucket is one change and is not created;
// after EnsureBucket nothing is planned; drift of this extension's settings (its abort rule
// gone, one of its labels changed) is named, twice (the plan writes nothing), and EnsureBucket
// then leaves nothing to plan.
func TestPlanBucketIsWhatEnsureBucketDoes(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s, c := newStore(t, data), rawClient(t, data)
	name := newBucketName()
	cfg := &gcpapi.BackupBucketConfig{Labels: map[string]string{"team": "backup"}}
	if got := plan(t, name, cfg); !slices.Equal(got, []string{"create bucket"}) {
		t.Fatalf("plan of a missing bucket: %v", got)
	}
	if _, err := c.Bucket(name).Attrs(ctx); err == nil {
		t.Fatal("PlanBucket created the bucket")
	}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if got := plan(t, name, cfg); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket: %v; want nothing", got)
	}
	attrs, err := c.Bucket(name).Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rules []storage.LifecycleRule
	for _, r := range attrs.Lifecycle.Rules {
		if r.Action.Type != storage.AbortIncompleteMPUAction {
			rules = append(rules, r)
		}
	}
	upd := storage.BucketAttrsToUpdate{Lifecycle: &storage.Lifecycle{Rules: rules}}
	upd.SetLabel("team", "someone-else")
	if _, err := c.Bucket(name).Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	want := []string{`create lifecycle rule "AbortIncompleteMultipartUpload if age 7, the whole bucket"`, "update label team"}
	for range 2 {
		got := plan(t, name, cfg)
		if len(got) != 2 || got[0][:len("create lifecycle rule")] != "create lifecycle rule" || got[1] != want[1] {
			t.Fatalf("plan with drift: %v; want like %v", got, want)
		}
	}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if got := plan(t, name, cfg); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket corrected the drift: %v; want nothing", got)
	}
}

// abortRule is the form of this extension's rule that aborts abandoned uploads.
var abortRule = storage.LifecycleRule{Action: storage.LifecycleAction{Type: storage.AbortIncompleteMPUAction},
	Condition: storage.LifecycleCondition{AgeInDays: 7}}

// TestAnOperatorsAbortRuleIsNotTakenForOurs (issue 44, the review's gcp finding): GCS rules have
// no IDs, and an operator's rule of the same form as this extension's abort rule was taken for
// ours and removed by the hand-back. The bucket's label gcpapi.AbortRuleLabel, written in the
// same request as the lifecycle, says whose it is: the hand-back removes only a rule this
// extension added, and a rule of somebody else's found in its place is kept, ours not added
// beside it, and kept by the next hand-back too. A completed hand-back takes the labels with it
// (issue 43): a rule of that form on a bucket without them is somebody else's, and this
// extension does not take such a bucket again (not provider-gcp's one rule alone).
func TestAnOperatorsAbortRuleIsNotTakenForOurs(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s, c := newStore(t, data), rawClient(t, data)
	name := newBucketName()
	cfg := immutable(24*time.Hour, false)
	back := immutable(24*time.Hour, false)
	back.HandBack = true
	abortRules := func() (n int, label string) {
		t.Helper()
		attrs, err := c.Bucket(name).Attrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range attrs.Lifecycle.Rules {
			if r.Action.Type == storage.AbortIncompleteMPUAction {
				n++
			}
		}
		return n, attrs.Labels[gcpapi.AbortRuleLabel]
	}

	// Created by this extension: the rule is ours, and the hand-back removes it.
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if n, label := abortRules(); n != 1 || label != "added" {
		t.Fatalf("created: %d abort rules, label %q; want ours, labelled added", n, label)
	}
	if err := ensureFinal(t, s, name, back); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	if n, label := abortRules(); n != 0 || label != "" {
		t.Fatalf("handed back: %d abort rules, label %q; want ours removed, and the label with it", n, label)
	}

	// While provider-gcp is in charge, the operator adds a rule of the same form: it is not
	// ours, and the bucket is no longer provider-gcp's one rule alone, so this extension does not
	// take it again and leaves it as it is.
	attrs, err := c.Bucket(name).Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bucket(name).Update(ctx, storage.BucketAttrsToUpdate{Lifecycle: &storage.Lifecycle{Rules: append(attrs.Lifecycle.Rules, abortRule)}}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, s, name, cfg); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("taking the bucket with the operator's rule again: %v; want ErrOwnedByOther", err)
	}
	if n, label := abortRules(); n != 1 || label != "" {
		t.Fatalf("after the refused takeover: %d abort rules, label %q; want the operator's alone, no label", n, label)
	}

	// A bucket an earlier build handed back keeps ManagedLabel and the label none: taken again,
	// the operator's rule stays, ours is not added beside it, and the next hand-back keeps it.
	upd := storage.BucketAttrsToUpdate{}
	upd.SetLabel(gcpapi.ManagedLabel, gcpapi.ManagedLabelValue)
	upd.SetLabel(gcpapi.AbortRuleLabel, "none")
	if _, err := c.Bucket(name).Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if n, label := abortRules(); n != 1 || label != "none" {
		t.Fatalf("taken again: %d abort rules, label %q; want the operator's alone (none of ours beside it), labelled none", n, label)
	}
	if got, want := planFinal(t, name, back), []string{"delete label " + gcpapi.AbortRuleLabel, "delete label " + gcpapi.ManagedLabel}; !slices.Equal(got, want) {
		t.Fatalf("plan of the second hand-back: %v; want %v alone (the abort rule is not ours)", got, want)
	}
	if err := ensureFinal(t, s, name, back); err != nil {
		t.Fatalf("second hand-back: %v", err)
	}
	if n, label := abortRules(); n != 1 || label != "" {
		t.Fatalf("after the second hand-back: %d abort rules, label %q; want the operator's kept (before: removed as ours), our label gone", n, label)
	}
	// Without this extension's labels the rule is nobody's of ours: a further reconcile with
	// handBack leaves the bucket as it is.
	if got := plan(t, name, back); len(got) != 0 {
		t.Fatalf("plan after the second hand-back: %v; want nothing", got)
	}
	// The operator removes theirs: taken again as provider-gcp's bucket, ours is added, and is ours.
	attrs, err = c.Bucket(name).Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rules := slices.DeleteFunc(slices.Clone(attrs.Lifecycle.Rules), func(r storage.LifecycleRule) bool { return r.Action.Type == storage.AbortIncompleteMPUAction })
	if _, err := c.Bucket(name).Update(ctx, storage.BucketAttrsToUpdate{Lifecycle: &storage.Lifecycle{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if n, label := abortRules(); n != 1 || label != "added" {
		t.Fatalf("the operator's removed: %d abort rules, label %q; want ours added, labelled added", n, label)
	}
}

// TestHandBackKeepsTheLabelsWhileCredentialsAreDeclared: while the configuration still declares
// generatedCredentials beside handBack (the hand-back waits for the settings), this extension's
// labels stay, so that unsetting handBack finds the bucket still this extension's; once the
// settings are gone, the hand-back removes them.
func TestHandBackKeepsTheLabelsWhileCredentialsAreDeclared(t *testing.T) {
	data := gcs.SecretData()
	s, name := newStore(t, data), newBucketName()
	if err := ensure(t, s, name, &gcpapi.BackupBucketConfig{}); err != nil {
		t.Fatal(err)
	}
	waiting := &gcpapi.BackupBucketConfig{HandBack: true, GeneratedCredentials: &gcpapi.GeneratedCredentialsConfig{}}
	if err := ensure(t, s, name, waiting); err != nil {
		t.Fatalf("hand-back with generatedCredentials declared: %v", err)
	}
	if l := field(t, name, "labels"); l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue {
		t.Fatalf("labels while generatedCredentials are declared: %v; want %s kept", l, gcpapi.ManagedLabel)
	}
	if err := ensure(t, s, name, &gcpapi.BackupBucketConfig{}); err != nil {
		t.Fatalf("handBack unset: %v; want the bucket still this extension's", err)
	}
	if err := ensureFinal(t, s, name, &gcpapi.BackupBucketConfig{HandBack: true}); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	for _, k := range []string{gcpapi.ManagedLabel, gcpapi.AbortRuleLabel} {
		if v, ok := field(t, name, "labels")[k]; ok {
			t.Errorf("after the hand-back the bucket keeps this extension's label %s=%v", k, v)
		}
	}
}

// TestHandBackKeepsTheLabelsUntilTheControllerCompletes: a pass of a hand-back that the
// BackupBucket controller still waits on (objectstore.Bucket.HandBackComplete unset) keeps this
// extension's labels, so that unsetting handBack then finds the bucket still this extension's
// (not adopted again with a false adopted-from label); the completing pass removes them, and a
// later reconcile with handBack writes nothing.
func TestHandBackKeepsTheLabelsUntilTheControllerCompletes(t *testing.T) {
	s, name := newStore(t, gcs.SecretData()), newBucketName()
	back := &gcpapi.BackupBucketConfig{HandBack: true}
	if err := ensure(t, s, name, &gcpapi.BackupBucketConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, s, name, back); err != nil {
		t.Fatalf("hand-back the controller still waits on: %v", err)
	}
	if l := field(t, name, "labels"); l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue || l[gcpapi.AbortRuleLabel] == nil {
		t.Fatalf("labels while the controller waits: %v; want %s and %s kept", l, gcpapi.ManagedLabel, gcpapi.AbortRuleLabel)
	}
	if err := ensure(t, s, name, &gcpapi.BackupBucketConfig{}); err != nil {
		t.Fatalf("handBack unset meanwhile: %v; want the bucket still this extension's", err)
	}
	if l := field(t, name, "labels"); l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue || l[gcpprovider.AdoptedLabel] != nil {
		t.Fatalf("labels after handBack was unset: %v; want %s, no %s (the bucket was never provider-gcp's)", l, gcpapi.ManagedLabel, gcpprovider.AdoptedLabel)
	}
	if err := ensureFinal(t, s, name, back); err != nil {
		t.Fatalf("completing hand-back: %v", err)
	}
	for _, k := range []string{gcpapi.ManagedLabel, gcpapi.AbortRuleLabel} {
		if v, ok := field(t, name, "labels")[k]; ok {
			t.Errorf("after the completing pass the bucket keeps this extension's label %s=%v", k, v)
		}
	}
	before := patches(name)
	if err := ensure(t, s, name, back); err != nil {
		t.Fatalf("a later reconcile with handBack: %v", err)
	}
	if n := patches(name) - before; n != 0 {
		t.Fatalf("a later reconcile with handBack sent %d bucket updates; want none", n)
	}
}
