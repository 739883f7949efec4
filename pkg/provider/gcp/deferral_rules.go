// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The lifecycle rules of deferrals besides markedRule: the per-prefix rules of earlier versions,
// which the bucket's reconcile drops once they are spent, and the per-prefix noncurrent rule a
// deferral still writes on a store that does not mark noncurrent generations (see DeferDeletion).

// oldMarkedRule is the per-prefix custom-time rule of earlier versions; markedRule covers what it
// covers.
func oldMarkedRule(prefix string) storage.LifecycleRule {
	r := markedRule()
	r.Condition.MatchesPrefix = prefixCondition(prefix)
	return r
}

// noncurrentRule deletes the generations under prefix that became noncurrent before the date
// before (midnight UTC), once their retention allows.
func noncurrentRule(prefix string, before time.Time) storage.LifecycleRule {
	return storage.LifecycleRule{
		Action: storage.LifecycleAction{Type: storage.DeleteAction},
		Condition: storage.LifecycleCondition{Liveness: storage.Archived, NoncurrentTimeBefore: before,
			MatchesPrefix: prefixCondition(prefix)},
	}
}

func prefixCondition(prefix string) []string {
	if prefix == "" {
		return nil
	}
	return []string{prefix}
}

// deferralOf recognises a rule of ours exactly: one of the two shapes above and nothing else,
// for one prefix ending in "/" (or the whole bucket). It returns the prefix the rule covers.
func deferralOf(r storage.LifecycleRule) (string, bool) {
	prefix := ""
	switch len(r.Condition.MatchesPrefix) {
	case 0:
	case 1:
		prefix = r.Condition.MatchesPrefix[0]
		if !strings.HasSuffix(prefix, "/") || len(prefix) < 2 {
			return "", false
		}
	default:
		return "", false
	}
	if reflect.DeepEqual(r, oldMarkedRule(prefix)) {
		return prefix, true
	}
	if !r.Condition.NoncurrentTimeBefore.IsZero() && reflect.DeepEqual(r, noncurrentRule(prefix, r.Condition.NoncurrentTimeBefore)) {
		return prefix, true
	}
	return "", false
}

// RuleLimitError reports a bucket whose lifecycle has no room for the rules of a deferral. It
// matches objectstore.ErrUnsupported: the deletion cannot be deferred now, and the caller retries
// it when the locks expire.
type RuleLimitError struct {
	Bucket, Prefix string
	// InUse is how many rules the bucket has after dropping ours that have nothing left to delete;
	// Needed how many more the deferral needs.
	InUse, Needed int
}

func (e *RuleLimitError) Error() string {
	return fmt.Sprintf("bucket %q has %d of the %d lifecycle rules GCS allows; deferring the deletion under %q needs %d more, so it is retried when the retention locks expire",
		e.Bucket, e.InUse, maxLifecycleRules, e.Prefix, e.Needed)
}

// Is makes errors.Is(err, objectstore.ErrUnsupported) true.
func (e *RuleLimitError) Is(target error) bool { return target == objectstore.ErrUnsupported }

// RuleNotKeptError reports a lifecycle update that the store acknowledged but did not keep: the
// rule was missing when read back, and nobody else had changed the bucket meanwhile. It matches
// objectstore.ErrUnsupported: such a store cannot defer deletions.
type RuleNotKeptError struct {
	Bucket string
	Rule   string
}

func (e *RuleNotKeptError) Error() string {
	return fmt.Sprintf("bucket %q acknowledged the lifecycle rule %s but did not keep it (read back without it); the store does not keep lifecycle rules", e.Bucket, e.Rule)
}

// Is makes errors.Is(err, objectstore.ErrUnsupported) true.
func (e *RuleNotKeptError) Is(target error) bool { return target == objectstore.ErrUnsupported }

// ensureRules puts want on the bucket's lifecycle, keeping every other rule as it is, and returns
// the rules of ours for prefix once a read shows them covering want. A rule of ours for the same prefix with an earlier noncurrent
// date is replaced (ours, and the new one is the later); when the lifecycle is full, rules of
// ours whose prefix holds nothing any more are dropped first.
func (s *management) ensureRules(ctx context.Context, bucket, prefix string, want []storage.LifecycleRule) ([]storage.LifecycleRule, error) {
	h := s.client.Bucket(bucket)
	var wrote int64 // the metageneration our last write produced
	for range maxRuleWrites {
		attrs, err := h.Attrs(ctx)
		if err != nil {
			return nil, classify(err)
		}
		rules, missing := planRules(attrs.Lifecycle.Rules, prefix, want)
		if missing == 0 {
			return slices.DeleteFunc(rules, func(r storage.LifecycleRule) bool { p, ours := deferralOf(r); return !ours || p != prefix }), nil
		}
		if wrote != 0 && attrs.MetaGeneration == wrote {
			// Nobody changed the bucket after our write, and the rule is not there.
			return nil, &RuleNotKeptError{Bucket: bucket, Rule: describeRules(want)}
		}
		if len(rules) > maxLifecycleRules {
			if rules, err = s.dropSpent(ctx, bucket, prefix, rules); err != nil {
				return nil, err
			}
			if len(rules) > maxLifecycleRules {
				return nil, &RuleLimitError{Bucket: bucket, Prefix: prefix, InUse: len(rules) - missing, Needed: missing}
			}
		}
		lc := storage.Lifecycle{Rules: rules}
		updated, err := h.If(storage.BucketConditions{MetagenerationMatch: attrs.MetaGeneration}).Update(ctx, storage.BucketAttrsToUpdate{Lifecycle: &lc})
		if statusOf(err) == http.StatusPreconditionFailed {
			wrote = 0
			continue // somebody else changed the bucket: read again
		}
		if err != nil {
			return nil, fmt.Errorf("writing the deferred-deletion lifecycle rule of bucket %q: %w", bucket, classify(err))
		}
		wrote = updated.MetaGeneration
	}
	return nil, fmt.Errorf("%w: the lifecycle of bucket %q kept changing while the deferred-deletion rule was written", objectstore.ErrThrottled, bucket)
}

// planRules returns the lifecycle with want added and how many rules of want were missing. Rules
// of others are kept untouched and in place; of ours, only a noncurrent rule of the same prefix
// with an earlier date is replaced.
func planRules(have []storage.LifecycleRule, prefix string, want []storage.LifecycleRule) ([]storage.LifecycleRule, int) {
	out := slices.Clone(have)
	missing := 0
	for _, w := range want {
		if slices.ContainsFunc(out, func(r storage.LifecycleRule) bool { return reflect.DeepEqual(r, w) }) {
			continue
		}
		missing++
		if w.Condition.NoncurrentTimeBefore.IsZero() {
			out = append(out, w)
			continue
		}
		replaced := false
		for i, r := range out {
			if p, ours := deferralOf(r); ours && p == prefix && !r.Condition.NoncurrentTimeBefore.IsZero() {
				if !r.Condition.NoncurrentTimeBefore.Before(w.Condition.NoncurrentTimeBefore) {
					missing-- // ours already covers as much or more
				} else {
					out[i] = w
				}
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, w)
		}
	}
	return out, missing
}

// dropSpent removes rules of ours, other than those of prefix, whose prefix holds no generation
// any more: they have nothing left to delete.
func (s *management) dropSpent(ctx context.Context, bucket, prefix string, rules []storage.LifecycleRule) ([]storage.LifecycleRule, error) {
	empty := map[string]bool{}
	out := rules[:0:0]
	for _, r := range rules {
		p, ours := deferralOf(r)
		if !ours || p == prefix || p == "" {
			out = append(out, r)
			continue
		}
		if _, known := empty[p]; !known {
			e, err := s.prefixEmpty(ctx, bucket, p)
			if err != nil {
				return nil, err
			}
			empty[p] = e
		}
		if !empty[p] {
			out = append(out, r)
		}
	}
	return out, nil
}

// prefixEmpty reports whether no generation (live or noncurrent) lies under prefix.
func (s *management) prefixEmpty(ctx context.Context, bucket, prefix string) (bool, error) {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return false, err
	}
	var attrs []*storage.ObjectAttrs
	if _, err := iterator.NewPager(s.client.Bucket(bucket).Objects(ctx, q), 1, "").NextPage(&attrs); err != nil {
		return false, classifyBucket(err)
	}
	return len(attrs) == 0, nil
}

// describeRule names a rule as the console shows it, quoted.
func describeRule(r storage.LifecycleRule) string {
	c := r.Condition
	var conds []string
	if c.DaysSinceCustomTime > 0 {
		conds = append(conds, fmt.Sprintf("daysSinceCustomTime %d", c.DaysSinceCustomTime))
	}
	if c.Liveness == storage.Archived {
		conds = append(conds, "isLive false")
	}
	if !c.NoncurrentTimeBefore.IsZero() {
		conds = append(conds, "noncurrentTimeBefore "+c.NoncurrentTimeBefore.Format(time.DateOnly))
	}
	scope := "the whole bucket"
	if len(c.MatchesPrefix) > 0 {
		scope = "matchesPrefix " + strings.Join(c.MatchesPrefix, ",")
	}
	return fmt.Sprintf("%q", r.Action.Type+" if "+strings.Join(append(conds, scope), ", "))
}

// describeRules names rules as the console shows them.
func describeRules(rules []storage.LifecycleRule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = describeRule(r)
	}
	word := "lifecycle rule "
	if len(rules) > 1 {
		word = "lifecycle rules "
	}
	return word + strings.Join(parts, " and ")
}
