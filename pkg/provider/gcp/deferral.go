package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Deferred deletion on GCS.
//
// Live generations under the deferred prefix are marked with a custom time; the noncurrent ones
// cannot be (fake-gcs-server patches the live object whatever generation is named, and the
// deletion must not rest on what no stand-in here can show), so a second rule takes the
// generations under the prefix that were noncurrent before the day after the deferral. Each rule
// names the prefix in matchesPrefix, so it reaches only the deferred entry: two rules per entry at
// most (one without noncurrent generations), GCS allowing 100 per bucket.
const (
	// maxLifecycleRules is how many lifecycle rules GCS allows on one bucket.
	maxLifecycleRules = 100
	// maxRuleWrites bounds the read-modify-write rounds of the lifecycle when other writers
	// (other entries deferring at the same moment) keep changing it.
	maxRuleWrites = 8
)

// markedRule deletes the generations under prefix that DeferDeletion marked with a custom time, a
// day after marking and never before their retention allows. An empty prefix is the whole bucket
// (bucket deletion).
func markedRule(prefix string) storage.LifecycleRule {
	return storage.LifecycleRule{
		Action:    storage.LifecycleAction{Type: storage.DeleteAction},
		Condition: storage.LifecycleCondition{DaysSinceCustomTime: 1, MatchesPrefix: prefixCondition(prefix)},
	}
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
	if reflect.DeepEqual(r, markedRule(prefix)) {
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

// DeferDeletion implements objectstore.Store: it marks the live generations under prefix with a
// custom time (where none is set yet, so an interrupted deferral resumes; custom time can only
// move forward), then puts the rules of the prefix on the bucket and reads them back. Rules of
// others are kept as they are. It returns the rules as the operator finds them in the console.
func (s *store) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || len(prefix) < 2) {
		return objectstore.Deferral{}, objectstore.Invalidf("deferral prefix %q must end with '/'", prefix)
	}
	noncurrent, err := s.markLive(ctx, bucket, prefix)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	want := []storage.LifecycleRule{markedRule(prefix)}
	if noncurrent {
		// Midnight UTC of tomorrow: every generation noncurrent now became so before it.
		tomorrow := time.Now().UTC().AddDate(0, 0, 1)
		want = append(want, noncurrentRule(prefix, time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 0, 0, 0, 0, time.UTC)))
	}
	inPlace, err := s.ensureRules(ctx, bucket, prefix, want)
	if errors.Is(err, objectstore.ErrForbidden) {
		return objectstore.Deferral{}, fmt.Errorf("bucket %q: the deferral marked the live generations under %q, but these credentials may not read or write the bucket's lifecycle rules (storage.buckets.get and storage.buckets.update, which generated credentials, roles/storage.objectAdmin on the bucket, do not have: a lifecycle write could delete every backup); the operator's credentials (the BackupBucket's) complete it: %w", bucket, prefix, err)
	}
	if err != nil {
		return objectstore.Deferral{}, err
	}
	return objectstore.Deferral{Rule: describeRules(inPlace)}, nil
}

// markLive sets the custom time of every unmarked live generation under prefix and reports
// whether the listing met noncurrent generations.
func (s *store) markLive(ctx context.Context, bucket, prefix string) (bool, error) {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name", "Generation", "CustomTime", "Deleted"}); err != nil {
		return false, err
	}
	now := time.Now().UTC()
	noncurrent := false
	var unmarked []objectstore.ObjectVersion
	pager := iterator.NewPager(s.client.Bucket(bucket).Objects(ctx, q), s.listPageSize(), "")
	for {
		var attrs []*storage.ObjectAttrs
		next, err := pager.NextPage(&attrs)
		if err != nil {
			return false, classifyBucket(err)
		}
		for _, a := range attrs {
			switch {
			case !a.Deleted.IsZero():
				noncurrent = true
			case a.CustomTime.IsZero():
				unmarked = append(unmarked, objectstore.ObjectVersion{Key: a.Name, Version: fmt.Sprint(a.Generation)})
			}
		}
		if err := s.mark(ctx, bucket, unmarked, now); err != nil {
			return false, err
		}
		unmarked = unmarked[:0]
		if next == "" {
			return noncurrent, nil
		}
	}
}

// mark sets the custom time of the listed generations; one that is gone meanwhile needs none.
func (s *store) mark(ctx context.Context, bucket string, objects []objectstore.ObjectVersion, at time.Time) error {
	failed := objectstore.ForEachObject(ctx, objects, deferParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
		h, err := s.object(bucket, o)
		if err != nil {
			return err
		}
		_, err = h.Update(ctx, storage.ObjectAttrsToUpdate{CustomTime: at})
		if err = classify(err); errors.Is(err, objectstore.ErrNotFound) {
			return nil
		}
		return err
	})
	if len(failed) > 0 {
		return fmt.Errorf("marking %d objects for deferred deletion, first %q: %w", len(failed), failed[0].Object.Key, failed[0].Err)
	}
	return nil
}

// ensureRules puts want on the bucket's lifecycle, keeping every other rule as it is, and returns
// the rules of ours for prefix once a read shows them covering want. A rule of ours for the same prefix with an earlier noncurrent
// date is replaced (ours, and the new one is the later); when the lifecycle is full, rules of
// ours whose prefix holds nothing any more are dropped first.
func (s *store) ensureRules(ctx context.Context, bucket, prefix string, want []storage.LifecycleRule) ([]storage.LifecycleRule, error) {
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
func (s *store) dropSpent(ctx context.Context, bucket, prefix string, rules []storage.LifecycleRule) ([]storage.LifecycleRule, error) {
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
func (s *store) prefixEmpty(ctx context.Context, bucket, prefix string) (bool, error) {
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

// describeRules names rules as the console shows them.
func describeRules(rules []storage.LifecycleRule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
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
		parts[i] = fmt.Sprintf("%q", r.Action.Type+" if "+strings.Join(append(conds, scope), ", "))
	}
	word := "lifecycle rule "
	if len(rules) > 1 {
		word = "lifecycle rules "
	}
	return word + strings.Join(parts, " and ")
}
