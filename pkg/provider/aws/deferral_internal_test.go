// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestDeferralRulesAreComparedByMeaning: a rule is read back in the store's own form (a tag
// alone or inside And with an empty prefix, a missing prefix for ""), and that is no difference;
// a wider or disabled rule, or other actions, are.
func TestDeferralRulesAreComparedByMeaning(t *testing.T) {
	want := deferralRules()
	tagged, markers := want[0], want[1]
	asAnd := tagged
	asAnd.Filter = &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String(""),
		Tags: []types.Tag{{Key: aws.String(DeferredDeletionTag), Value: aws.String("true")}}}}
	noPrefix := markers
	noPrefix.Filter = &types.LifecycleRuleFilter{}
	withPrefix := tagged
	withPrefix.Filter = &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("shoot--a--b--1/"),
		Tags: []types.Tag{{Key: aws.String(DeferredDeletionTag), Value: aws.String("true")}}}}
	prefixOnly := tagged
	prefixOnly.Filter = &types.LifecycleRuleFilter{Prefix: aws.String("")}
	disabled := tagged
	disabled.Status = types.ExpirationStatusDisabled
	longer := tagged
	longer.Expiration = &types.LifecycleExpiration{Days: aws.Int32(30)}
	cases := []struct {
		name      string
		got       *types.LifecycleRule
		want      types.LifecycleRule
		different bool
	}{
		{"as written", &tagged, tagged, false},
		{"tag inside And with an empty prefix", &asAnd, tagged, false},
		{"markers rule without a prefix", &noPrefix, markers, false},
		{"missing", nil, tagged, true},
		{"disabled", &disabled, tagged, true},
		{"scoped to a prefix as well", &withPrefix, tagged, true},
		{"the whole bucket, no tag", &prefixOnly, tagged, true},
		{"other expiration", &longer, tagged, true},
	}
	for _, c := range cases {
		if why := ruleMismatch(c.got, c.want); (why != "") != c.different {
			t.Errorf("%s: ruleMismatch = %q; want a difference: %v", c.name, why, c.different)
		}
	}
}

// TestWithDeferralRulesDropsThePerEntryRules: the rules of earlier versions (the whole prefix,
// no tag) go, other rules stay, ours are there once.
func TestWithDeferralRulesDropsThePerEntryRules(t *testing.T) {
	old := types.LifecycleRule{ID: aws.String("gardener-backup-deferred-shoot--a--b--1/"), Status: types.ExpirationStatusEnabled,
		Filter: &types.LifecycleRuleFilter{Prefix: aws.String("shoot--a--b--1/")}, Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}}
	abort := types.LifecycleRule{ID: aws.String(ruleAbortMultipart), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
		AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(7)}}
	got := withDeferralRules(append([]types.LifecycleRule{old, abort}, deferralRules()...))
	want := append([]types.LifecycleRule{abort}, deferralRules()...)
	if !sameRules(got, want) {
		t.Fatalf("withDeferralRules = %+v; want the abort rule and the two deferral rules", got)
	}
	if !sameRules(withDeferralRules(got), got) {
		t.Fatal("withDeferralRules is not idempotent")
	}
	if rulesMismatch(got) != "" || rulesMismatch([]types.LifecycleRule{old}) == "" {
		t.Fatal("rulesMismatch does not tell the deferral rules in place from the old per-entry rule")
	}
}
