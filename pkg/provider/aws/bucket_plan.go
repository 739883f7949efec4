// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// A bucket's settings are converged in four moves: observe what is there, compute what is
// wanted (this extension's part merged into what is there: foreign policy statements and
// lifecycle rules are kept), diff, apply. PlanBucket stops before the last: it returns the diff
// that EnsureBucket applies, computed by the same steps.

// pending is one change of a bucket's settings: what the plan says, and the write that makes it.
type pending struct {
	change objectstore.BucketChange
	apply  func(context.Context) error
}

// settingStep is one setting's observe-desire-diff: it reads the setting and returns the changes
// that bring it to the declared state (none when it is there).
type settingStep struct {
	setting awsapi.Setting // the switch that turns the step (or its part) off; empty: none
	skip    bool           // the whole step is skipped when setting is disabled
	what    string
	// plan reads and diffs; lockOn is whether Object Lock is (or, after the changes planned
	// before, will be) on.
	plan     func(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, lockOn *bool) ([]pending, error)
	notKnown []string // extra codes meaning "this store does not know the API" for this step
}

func (s *management) settingSteps() []settingStep {
	return []settingStep{
		{what: "immutability (versioning and Object Lock)", plan: s.planImmutability},
		{setting: awsapi.SettingDefaultEncryption, skip: true, what: "default encryption", plan: s.planEncryption},
		{setting: awsapi.SettingPublicAccessBlock, skip: true, what: "public access block", plan: s.planPublicAccessBlock},
		{setting: awsapi.SettingTLSOnlyPolicy, skip: true, what: "TLS-only bucket policy", plan: s.planTLSPolicy},
		// Always runs: it also keeps the deferred-deletion rules (see deferralRules).
		{setting: awsapi.SettingMultipartAbortLifecycle, what: "the lifecycle rules (aborting incomplete multipart uploads, deferred deletion)", plan: s.planLifecycle, notKnown: []string{"InvalidArgument"}},
	}
}

// converge runs every step on the existing bucket name: it plans each and, with apply, makes its
// changes before the next step reads. It returns the changes (made, with apply).
func (s *management) converge(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, apply bool) ([]objectstore.BucketChange, error) {
	var out []objectstore.BucketChange
	lockOn := false
	for _, step := range s.settingSteps() {
		if step.skip && cfg.Disabled(step.setting) {
			continue
		}
		changes, err := step.plan(ctx, name, cfg, &lockOn)
		for _, c := range changes {
			if err != nil || !apply {
				break
			}
			err = c.apply(ctx)
		}
		if err != nil {
			if step.setting != "" && !cfg.Disabled(step.setting) && (unimplemented(err) || slices.Contains(step.notKnown, errorCode(err))) {
				return out, fmt.Errorf("%w: %s is not implemented by this S3-compatible store; list %q in providerConfig.disabledSettings to run without it: %w", objectstore.ErrUnsupported, step.what, step.setting, err)
			}
			return out, fmt.Errorf("converging %s: %w", step.what, err)
		}
		for _, c := range changes {
			out = append(out, c.change)
		}
	}
	return out, nil
}

// PlanBucket implements objectstore.BucketPlanner: EnsureBucket's steps without their writes.
func (s *management) PlanBucket(ctx context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	name, region, err := s.bucketAndRegion(b)
	if err != nil {
		return nil, err
	}
	missing, err := s.ensureExists(ctx, name, region, s.cfg.Immutability != nil, false)
	if err != nil {
		return nil, err
	}
	if missing {
		return []objectstore.BucketChange{{Setting: "bucket", Action: objectstore.ChangeCreate, Detail: "in " + region + ", with every setting as declared"}}, nil
	}
	return s.converge(ctx, name, s.cfg, false)
}

// planLifecycle diffs the bucket's lifecycle with desiredLifecycle; the write goes through
// updateLifecycle, which computes the same desired rules from what it reads then. On a store
// that does not know lifecycle configurations, a bucket without Object Lock (so nothing can be
// locked and nothing deferred) and with the multipart rule switched off does without them.
func (s *management) planLifecycle(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, lockOn *bool) ([]pending, error) {
	tolerable := func(err error) bool {
		return err != nil && !*lockOn && cfg.Disabled(awsapi.SettingMultipartAbortLifecycle) && (unimplemented(err) || errorCode(err) == "InvalidArgument")
	}
	current, err := s.lifecycleRules(ctx, name)
	if tolerable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	desired := func(rules []types.LifecycleRule) ([]types.LifecycleRule, error) { //nolint:unparam // updateLifecycle's change may fail; this one never does
		return desiredLifecycle(rules, cfg), nil
	}
	want, _ := desired(current)
	if sameRules(current, want) {
		return nil, nil
	}
	apply := func(ctx context.Context) error {
		if err := s.updateLifecycle(ctx, name, desired); err != nil && !tolerable(err) {
			return err
		}
		return nil
	}
	var out []pending
	for _, c := range rulesDiff(current, want) {
		out = append(out, pending{change: c})
	}
	if len(out) == 0 { // the same rules, one of them twice
		out = append(out, pending{change: objectstore.BucketChange{Setting: "lifecycle rules", Action: objectstore.ChangeUpdate, Detail: "a rule read back twice is written once"}})
	}
	// One write makes them all: the first change carries it.
	out[0].apply = apply
	for i := 1; i < len(out); i++ {
		out[i].apply = func(context.Context) error { return nil }
	}
	return out, nil
}

// ownRule reports whether a lifecycle rule is this extension's, by its ID: every other rule is
// somebody else's and is kept as it is.
func ownRule(r types.LifecycleRule) bool {
	switch id := aws.ToString(r.ID); id {
	case ruleAbortMultipart, ExpiredDeleteMarkersRule, AdoptedRule:
		return true
	default:
		// DeferredDeletionRule and the per-entry rules of earlier versions.
		return strings.HasPrefix(id, ruleDeferredPrefix)
	}
}

// incumbentsRule reports whether a rule is provider-aws's own as its code writes it: its two
// deferral rules by ID, and its abort rule (written without an ID, to which the store gives one)
// by meaning.
func incumbentsRule(r types.LifecycleRule) bool {
	switch aws.ToString(r.ID) {
	case IncumbentDeferralRule, IncumbentDeleteMarkersRule:
		return true
	}
	return !ownRule(r) && ruleMismatch(&r, incumbentAbortRule()) == "" && r.Expiration == nil && r.NoncurrentVersionExpiration == nil
}

// desiredLifecycle is the lifecycle EnsureBucket converges to: every rule of others as it is,
// and this extension's. Normally these are the multipart abort rule and the two bucket-wide
// deferral rules (see deferralRules), which touch only versions DeferDeletion tagged and delete
// markers with nothing behind them; rules of the old per-entry form (ID
// gardener-backup-deferred-<prefix>, scoped by the entry's prefix alone: they expired the backups
// of an entry that uses the prefix again) are dropped. A bucket adopted from provider-aws keeps
// AdoptedRule in place of the incumbent's rules, which it replaces (see adoptionRule). With
// handBack, the incumbent's rules in its form take the place of this extension's.
func desiredLifecycle(current []types.LifecycleRule, cfg *awsapi.BackupBucketConfig) []types.LifecycleRule {
	wasAdopted := adopted(current)
	var want []types.LifecycleRule
	for _, r := range current {
		if ownRule(r) || ((wasAdopted || cfg.HandBack) && incumbentsRule(r)) {
			continue
		}
		want = append(want, r)
	}
	if cfg.HandBack {
		return append(want, incumbentLifecycle(cfg)...)
	}
	if wasAdopted {
		want = append(want, adoptionRule())
	}
	if !cfg.Disabled(awsapi.SettingMultipartAbortLifecycle) {
		want = append(want, types.LifecycleRule{
			ID:                             aws.String(ruleAbortMultipart),
			Status:                         types.ExpirationStatusEnabled,
			Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
			AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(abortMultipartDays)},
		})
	}
	return append(want, deferralRules()...)
}

// rulesDiff names the rules that differ between current and want: created, updated (same ID,
// another meaning) or deleted: every rule of current that want does not keep is named deleted. A
// rule without an ID in want matches one of current by meaning (the same actions and no other,
// ruleMismatch), each of current at most once.
func rulesDiff(current, want []types.LifecycleRule) []objectstore.BucketChange {
	var out []objectstore.BucketChange
	matched := make([]bool, len(current))
	for _, w := range want {
		i := -1
		for j, r := range current {
			// A rule without an ID matches one of current by meaning that no other rule of want
			// took: each rule EnsureBucket drops is named.
			if aws.ToString(w.ID) == "" && !matched[j] && ruleMismatch(&r, w) == "" || aws.ToString(w.ID) != "" && aws.ToString(r.ID) == aws.ToString(w.ID) {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			out = append(out, objectstore.BucketChange{Setting: ruleName(w), Action: objectstore.ChangeCreate})
		case ruleMismatch(&current[i], w) != "":
			matched[i] = true
			out = append(out, objectstore.BucketChange{Setting: ruleName(w), Action: objectstore.ChangeUpdate, Detail: ruleMismatch(&current[i], w)})
		default:
			matched[i] = true
		}
	}
	for i, r := range current {
		if !matched[i] {
			out = append(out, objectstore.BucketChange{Setting: ruleName(r), Action: objectstore.ChangeDelete})
		}
	}
	return out
}

func ruleName(r types.LifecycleRule) string {
	if id := aws.ToString(r.ID); id != "" {
		return "lifecycle rule " + id
	}
	return "lifecycle rule without an ID (provider-aws's abort of incomplete multipart uploads)"
}
