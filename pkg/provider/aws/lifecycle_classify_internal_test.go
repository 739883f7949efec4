// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// foreignAbortRules are rules of somebody else that share the scope and the abort action of
// provider-aws's abort rule but do more: none of them is provider-aws's.
func foreignAbortRules() []types.LifecycleRule {
	abortLike := func(id string, change func(*types.LifecycleRule)) types.LifecycleRule {
		r := incumbentAbortRule()
		r.ID = aws.String(id)
		change(&r)
		return r
	}
	return []types.LifecycleRule{
		abortLike("archive", func(r *types.LifecycleRule) {
			r.Transitions = []types.Transition{{Days: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}}
		}),
		abortLike("archive-noncurrent", func(r *types.LifecycleRule) {
			r.NoncurrentVersionTransitions = []types.NoncurrentVersionTransition{{NoncurrentDays: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}}
		}),
		abortLike("keep-three", func(r *types.LifecycleRule) {
			r.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NewerNoncurrentVersions: aws.Int32(3)}
		}),
		abortLike("small-objects", func(r *types.LifecycleRule) {
			r.Filter = &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String(""), ObjectSizeLessThan: aws.Int64(1024)}}
		}),
	}
}

func TestARuleThatDoesMoreThanTheIncumbentsAbortIsNotTheIncumbents(t *testing.T) {
	theirs := incumbentAbortRule()
	theirs.ID = aws.String("ZmE3ZjQ2") // the store's ID for a rule written without one
	if !incumbentsRule(theirs) {
		t.Fatal("provider-aws's abort rule as the store gives it back is not recognised")
	}
	for _, r := range foreignAbortRules() {
		if incumbentsRule(r) {
			t.Errorf("rule %s is taken for provider-aws's abort rule", aws.ToString(r.ID))
		}
	}
}

// On the hand-back and on an adopted bucket, the incumbent's rules are replaced; a rule of
// somebody else that resembles one stays, and the plan names every rule EnsureBucket removes.
func TestForeignRulesResemblingTheIncumbentsStayAndThePlanNamesEveryRemoval(t *testing.T) {
	theirs := incumbentAbortRule()
	theirs.ID = aws.String("ZmE3ZjQ2")
	for _, c := range []struct {
		name  string
		extra []types.LifecycleRule
		cfg   *awsapi.BackupBucketConfig
	}{
		{"hand-back", nil, &awsapi.BackupBucketConfig{HandBack: true}},
		{"adopted", []types.LifecycleRule{adoptionRule()}, &awsapi.BackupBucketConfig{}},
	} {
		// Each foreign rule alone (where nothing else matches the incumbent's abort rule by
		// meaning), and with provider-aws's abort rule.
		for _, r := range foreignAbortRules() {
			current := append(slices.Clone(c.extra), r)
			assertPlanNamesEveryRemoval(t, c.name+" "+aws.ToString(r.ID)+" alone", current, desiredLifecycle(current, c.cfg))
		}
		current := append(append(slices.Clone(c.extra), theirs), foreignAbortRules()...)
		want := desiredLifecycle(current, c.cfg)
		for _, r := range foreignAbortRules() {
			if !slices.ContainsFunc(want, func(w types.LifecycleRule) bool {
				return aws.ToString(w.ID) == aws.ToString(r.ID) && ruleMismatch(&w, r) == ""
			}) {
				t.Errorf("%s: rule %s of somebody else is dropped", c.name, aws.ToString(r.ID))
			}
		}
		assertPlanNamesEveryRemoval(t, c.name, current, want)
	}
}

// assertPlanNamesEveryRemoval checks that rulesDiff names deleted every rule of current that want
// does not keep by its ID, except one rewritten without an ID, which is exactly provider-aws's
// abort rule (the store gives it an ID), when want has that rule.
func assertPlanNamesEveryRemoval(t *testing.T, name string, current, want []types.LifecycleRule) {
	t.Helper()
	named := map[string]bool{}
	for _, ch := range rulesDiff(current, want) {
		if ch.Action == objectstore.ChangeDelete {
			named[ch.Setting] = true
		}
	}
	rewritten := slices.ContainsFunc(want, func(w types.LifecycleRule) bool { return w.ID == nil && reflect.DeepEqual(w, incumbentAbortRule()) })
	for _, r := range current {
		if slices.ContainsFunc(want, func(w types.LifecycleRule) bool { return aws.ToString(w.ID) == aws.ToString(r.ID) }) {
			continue
		}
		anonymous := r
		anonymous.ID = nil
		if rewritten && reflect.DeepEqual(anonymous, incumbentAbortRule()) {
			rewritten = false // written back once
			continue
		}
		if !named[ruleName(r)] {
			t.Errorf("%s: EnsureBucket removes rule %s and the plan does not say so", name, aws.ToString(r.ID))
		}
	}
}

// Two rules of provider-aws's abort form (written twice) become one: the plan says the other goes.
func TestThePlanNamesEachDuplicateOfTheIncumbentsAbortRule(t *testing.T) {
	first, second := incumbentAbortRule(), incumbentAbortRule()
	first.ID, second.ID = aws.String("one"), aws.String("two")
	current := []types.LifecycleRule{first, second}
	want := desiredLifecycle(current, &awsapi.BackupBucketConfig{HandBack: true})
	deleted := 0
	for _, ch := range rulesDiff(current, want) {
		if ch.Action == objectstore.ChangeDelete {
			deleted++
		}
	}
	if deleted != 1 {
		t.Errorf("rulesDiff names %d deletions; want 1 (of two abort rules one is written back): %+v", deleted, rulesDiff(current, want))
	}
}
