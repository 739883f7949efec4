// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
)

// Taking over from and handing back to gardener-extension-provider-aws (v1.73.0, "the
// incumbent"), see docs/aws.md.
//
// The incumbent names the bucket as this extension does (the BackupBucket's name) in the same
// account: S3 bucket names are unique, so the bucket of that name that the operator's
// credentials own is the seed's, whoever created it; a bucket of that name in another account is
// somebody else's (BucketAlreadyExists, ErrOwnedByOther) and is never touched. What the incumbent
// leaves that matters is its deferral: on an entry's deletion it tags every version left under the
// prefix gc-marked-for-deletion=true and replaces the bucket's whole lifecycle with
// GC-forTaggedObjects (that tag, expiry after a day), GC-delete-markers-objects and an abort rule
// without an ID (pkg/aws/client/client.go:2918-3005 at v1.73.0; names in pkg/aws/client/types.go:37-41).
//
// Takeover: a bucket whose lifecycle holds GC-forTaggedObjects in that form is adopted: the
// bucket's reconcile keeps AdoptedRule, which covers the incumbent's tag in the same way, for as
// long as the bucket is ours; its presence records the adoption. Both directions: every version
// this extension defers carries the incumbent's tag too, so the incumbent's rule deletes it after
// a hand-back, which therefore only writes the incumbent's rules in its form instead of ours (no
// scan: what was deferred is already marked in the incumbent's form).
const (
	// IncumbentDeferralRule is the incumbent's lifecycle rule for the versions it tagged.
	IncumbentDeferralRule = "GC-forTaggedObjects"
	// IncumbentDeleteMarkersRule is the incumbent's rule for expired delete markers.
	IncumbentDeleteMarkersRule = "GC-delete-markers-objects"
	// IncumbentDeferralTag is the object tag (value "true") the incumbent marks versions with.
	IncumbentDeferralTag = "gc-marked-for-deletion"
	// AdoptedRule covers IncumbentDeferralTag while the bucket is ours; it records that the bucket
	// was adopted from provider-aws.
	AdoptedRule = "gardener-backup-adopted-from-provider-aws"
)

// taggedExpiry is a rule that expires the versions carrying tag=true a day after they were
// written (current) or became noncurrent, as both deferral rules do.
func taggedExpiry(id, tag string) types.LifecycleRule {
	return types.LifecycleRule{
		ID:                          aws.String(id),
		Status:                      types.ExpirationStatusEnabled,
		Filter:                      &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String(tag), Value: aws.String("true")}},
		Expiration:                  &types.LifecycleExpiration{Days: aws.Int32(deferredDays)},
		NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(deferredDays)},
	}
}

// adoptionRule is AdoptedRule as the bucket's reconcile writes it.
func adoptionRule() types.LifecycleRule { return taggedExpiry(AdoptedRule, IncumbentDeferralTag) }

// incumbentDeferralRules are the incumbent's two deferral rules as it writes them
// (client.go:2961-2987 at v1.73.0).
func incumbentDeferralRules() []types.LifecycleRule {
	return []types.LifecycleRule{
		taggedExpiry(IncumbentDeferralRule, IncumbentDeferralTag),
		{
			ID:         aws.String(IncumbentDeleteMarkersRule),
			Status:     types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("")},
			Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)},
		},
	}
}

// incumbentLifecycle is the whole lifecycle the incumbent writes on an entry's deletion
// (client.go:2957-2998): its two deferral rules and, unless the store cannot take it, the abort
// rule without an ID.
func incumbentLifecycle(cfg *awsapi.BackupBucketConfig) []types.LifecycleRule {
	rules := incumbentDeferralRules()
	if !cfg.Disabled(awsapi.SettingMultipartAbortLifecycle) {
		rules = append(rules, incumbentAbortRule())
	}
	return rules
}

// incumbentAbortRule is the incumbent's abort rule, written without an ID (client.go:469-490).
func incumbentAbortRule() types.LifecycleRule {
	return types.LifecycleRule{
		Status:                         types.ExpirationStatusEnabled,
		Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
		AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(abortMultipartDays)},
	}
}

// adopted reports whether rules show the incumbent's deferral (its rule in its form) or the
// record of an earlier adoption.
func adopted(rules []types.LifecycleRule) bool {
	return slices.ContainsFunc(rules, func(r types.LifecycleRule) bool {
		switch aws.ToString(r.ID) {
		case IncumbentDeferralRule:
			return ruleMismatch(&r, taggedExpiry(IncumbentDeferralRule, IncumbentDeferralTag)) == ""
		case AdoptedRule:
			return true
		}
		return false
	})
}

// requiredDeferralRules are the rules a deferral of this store relies on: ours, or with handBack
// the incumbent's (every deferred version carries both tags).
func (s *management) requiredDeferralRules() []types.LifecycleRule {
	if s.cfg.HandBack {
		return incumbentDeferralRules()
	}
	return deferralRules()
}

func hasTag(tags []types.Tag, key string) bool {
	return slices.ContainsFunc(tags, func(t types.Tag) bool { return aws.ToString(t.Key) == key && aws.ToString(t.Value) == "true" })
}
