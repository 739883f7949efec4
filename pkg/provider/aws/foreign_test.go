// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// operatorRule is an operator's lifecycle rule under reports/ (an expiry: MinIO has no storage
// class to transition to without a tier).
var operatorRule = types.LifecycleRule{ID: aws.String("operator-reports-expiry"), Status: types.ExpirationStatusEnabled,
	Filter: &types.LifecycleRuleFilter{Prefix: aws.String("reports/")}, Expiration: &types.LifecycleExpiration{Days: aws.Int32(400)}}

// addOperatorSettings adds an operator's statement (OperatorAuditRead: an audit role may read
// reports/) to the bucket's policy and operatorRule to its lifecycle, keeping what is there.
func addOperatorSettings(t *testing.T, raw *s3.Client, name string) {
	t.Helper()
	ctx := context.Background()
	doc := map[string]any{"Version": "2012-10-17"}
	if out, err := raw.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name}); err == nil {
		if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &doc); err != nil {
			t.Fatal(err)
		}
	}
	statements, _ := doc["Statement"].([]any)
	doc["Statement"] = append(statements, map[string]any{"Sid": "OperatorAuditRead", "Effect": "Allow",
		"Principal": map[string]any{"AWS": []string{"arn:aws:iam::111122223333:role/audit"}},
		"Action":    []string{"s3:GetObject"}, "Resource": []string{"arn:aws:s3:::" + name + "/reports/*"}})
	policy, _ := json.Marshal(doc)
	if _, err := raw.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &name, Policy: aws.String(string(policy))}); err != nil {
		t.Fatal(err)
	}
	var rules []types.LifecycleRule
	if lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name}); err == nil {
		rules = lc.Rules
	}
	putRules(t, raw, name, append(rules, operatorRule))
}

// foreignSettings are the bucket's policy statements and lifecycle rules that are not this
// extension's (nor, with incumbents false, provider-aws's rules), each as JSON, sorted.
func foreignSettings(t *testing.T, raw *s3.Client, name string, incumbents bool) (statements, rules []string) {
	t.Helper()
	ctx := context.Background()
	if out, err := raw.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name}); err == nil {
		var doc struct{ Statement []map[string]any }
		if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Statement {
			if st["Sid"] != awsprovider.TLSOnlySid {
				b, _ := json.Marshal(st)
				statements = append(statements, string(b))
			}
		}
	}
	if lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name}); err == nil {
		for _, r := range lc.Rules {
			id := aws.ToString(r.ID)
			if strings.HasPrefix(id, "gardener-backup-") || (!incumbents && (id == "" || strings.HasPrefix(id, "GC-"))) {
				continue
			}
			b, _ := json.Marshal(r)
			rules = append(rules, string(b))
		}
	}
	slices.Sort(statements)
	slices.Sort(rules)
	return statements, rules
}

// TestForeignSettingsSurviveTakeoverAndHandBack: on a bucket in provider-aws's form (its TLS
// statement, where the store takes it, and its deferral rules), an operator's policy statement
// and lifecycle rule are kept by the takeover, by every reconcile after it and by the hand-back;
// this extension's statement is merged in beside them.
func TestForeignSettingsSurviveTakeoverAndHandBack(t *testing.T) {
	ctx := context.Background()
	raw, name := incumbentLandscape(t)
	addOperatorSettings(t, raw, name)
	wantStatements, wantRules := foreignSettings(t, raw, name, false)
	if !slices.ContainsFunc(wantStatements, func(s string) bool { return strings.Contains(s, "OperatorAuditRead") }) || len(wantRules) != 1 {
		t.Fatalf("the operator's settings were not put: statements %v, rules %v", wantStatements, wantRules)
	}
	cfg := immutable(awsapi.ModeGovernance, 1)
	check := func(stage string) {
		t.Helper()
		statements, rules := foreignSettings(t, raw, name, false)
		if !slices.Equal(statements, wantStatements) {
			t.Errorf("%s: the statements of others are %v; want them unchanged: %v", stage, statements, wantStatements)
		}
		if !slices.Equal(rules, wantRules) {
			t.Errorf("%s: the rules of others are %v; want them unchanged: %v", stage, rules, wantRules)
		}
	}
	for pass := range 2 {
		if err := ensure(t, minio.SecretData(), name, cfg); err != nil {
			t.Fatalf("reconcile %d: %v", pass, err)
		}
		check("after the takeover's reconcile " + string(rune('1'+pass)))
	}
	out, err := raw.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name})
	if err != nil || !strings.Contains(aws.ToString(out.Policy), awsprovider.TLSOnlySid) {
		t.Fatalf("this extension's statement is not in the policy: %v, %v", out, err)
	}
	back := immutable(awsapi.ModeGovernance, 1)
	back.HandBack = true
	if err := ensure(t, minio.SecretData(), name, back); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	check("after the hand-back")
	_, rules := storedVersions(t, raw, name)
	if want := []string{"GC-delete-markers-objects", "GC-forTaggedObjects", aws.ToString(operatorRule.ID)}; !slices.Equal(rules, want) {
		t.Fatalf("rules after the hand-back %v; want the incumbent's and the operator's %v", rules, want)
	}
}

// TestPlanBucketIsWhatEnsureBucketDoes: after EnsureBucket, PlanBucket finds nothing to change;
// with drift of this extension's settings (its statement and a rule gone, versioning suspended)
// it names exactly those, writes nothing, and EnsureBucket then leaves nothing to plan. A missing
// bucket is one change; a foreign statement or rule is never in a plan.
func TestPlanBucketIsWhatEnsureBucketDoes(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	cfg := immutable(awsapi.ModeGovernance, 1)
	store := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), cfg)
	planner, ok := store.Management.(objectstore.BucketPlanner)
	if !ok {
		t.Fatalf("%T does not implement objectstore.BucketPlanner", store.Management)
	}
	b := objectstore.Bucket{Name: name, Region: "eu-central-1"}
	plan := func() []string { return conformance.Plan(ctx, t, planner, b) }
	if got := plan(); !slices.Equal(got, []string{"create bucket"}) {
		t.Fatalf("plan of a missing bucket: %v", got)
	}
	if _, err := raw.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &name}); err == nil {
		t.Fatal("PlanBucket created the bucket")
	}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket: %v; want nothing", got)
	}
	addOperatorSettings(t, raw, name)
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan with an operator's statement and rule: %v; want nothing (they are not ours)", got)
	}

	// Drift: our statement and deferral rule removed, versioning suspended.
	addOperatorPolicyOnly(t, raw, name)
	var rules []types.LifecycleRule
	lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lc.Rules {
		if aws.ToString(r.ID) != awsprovider.DeferredDeletionRule {
			rules = append(rules, r)
		}
	}
	putRules(t, raw, name, rules)
	if _, err := raw.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); err != nil {
		t.Logf("suspending versioning (MinIO refuses it under Object Lock): %v", err)
	}
	statements, foreignRules := foreignSettings(t, raw, name, true)
	want := []string{"create bucket policy statement " + awsprovider.TLSOnlySid, "create lifecycle rule " + awsprovider.DeferredDeletionRule}
	if v, err := raw.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &name}); err == nil && v.Status == types.BucketVersioningStatusSuspended {
		want = append([]string{"update versioning"}, want...)
	}
	for range 2 { // the plan writes nothing: the second finds the same
		if got := plan(); !slices.Equal(got, want) {
			t.Fatalf("plan with drift: %v; want %v", got, want)
		}
	}
	if err := store.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket corrected the drift: %v; want nothing", got)
	}
	if s, r := foreignSettings(t, raw, name, true); !slices.Equal(s, statements) || !slices.Equal(r, foreignRules) {
		t.Fatalf("correcting the drift changed the settings of others: %v %v; want %v %v", s, r, statements, foreignRules)
	}
}

// addOperatorPolicyOnly replaces the bucket's policy with the operator's statement alone.
func addOperatorPolicyOnly(t *testing.T, raw *s3.Client, name string) {
	t.Helper()
	policy, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{{"Sid": "OperatorAuditRead", "Effect": "Allow",
		"Principal": map[string]any{"AWS": []string{"arn:aws:iam::111122223333:role/audit"}},
		"Action":    []string{"s3:GetObject"}, "Resource": []string{"arn:aws:s3:::" + name + "/reports/*"}}}})
	if _, err := raw.PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{Bucket: &name, Policy: aws.String(string(policy))}); err != nil {
		t.Fatal(err)
	}
}
