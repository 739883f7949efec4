// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
)

// TestIncumbentFormIsRecognised: the incumbent's abort rule has no ID and the store gives it one
// (AWS a generated one): the hand-back's read-back matches it by meaning; a different abort rule
// or a missing one is a difference. Adoption needs GC-forTaggedObjects in exactly its form.
func TestIncumbentFormIsRecognised(t *testing.T) {
	cfg := &awsapi.BackupBucketConfig{}
	written := incumbentLifecycle(cfg)
	readBack := func(change func([]types.LifecycleRule)) []types.LifecycleRule {
		rules := append([]types.LifecycleRule(nil), written...)
		rules[2].ID = aws.String("ZjQ0ZDk2YzMtNmM1Zi00ZmQ4LWE2")
		if change != nil {
			change(rules)
		}
		return rules
	}
	otherTag := taggedExpiry(IncumbentDeferralRule, "somebody-elses-tag")
	cases := []struct {
		name        string
		rules       []types.LifecycleRule
		same, adopt bool
	}{
		{name: "as written, the abort rule with the store's ID", rules: readBack(nil), same: true, adopt: true},
		{name: "abort after 3 days", rules: readBack(func(r []types.LifecycleRule) {
			r[2].AbortIncompleteMultipartUpload = &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(3)}
		}), adopt: true},
		{name: "abort rule missing", rules: readBack(nil)[:2], adopt: true},
		{name: "GC-forTaggedObjects scoped to another tag", rules: readBack(func(r []types.LifecycleRule) { r[0] = otherTag })},
		{name: "adopted earlier", rules: []types.LifecycleRule{adoptionRule()}, adopt: true},
		{name: "ours only", rules: withDeferralRules(nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sameRules(c.rules, written); got != c.same {
				t.Errorf("sameRules = %v; want %v", got, c.same)
			}
			if got := adopted(c.rules); got != c.adopt {
				t.Errorf("adopted = %v; want %v", got, c.adopt)
			}
		})
	}
}
