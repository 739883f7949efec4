// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	rawstorage "google.golang.org/api/storage/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Deferred deletion on GCS.
//
// A deferral touches only the generations it marked: DeferDeletion sets the custom time of every
// generation under the entry's prefix (live ones, and noncurrent ones by their generation), and
// one bucket-wide lifecycle rule, {Delete if daysSinceCustomTime 1} (markedRule), deletes a marked
// generation a day after its mark, never before its retention allows. A generation written later
// under the same prefix carries no custom time and is outside the rule. The rule is exactly the
// one gardener-extension-provider-gcp v1.54.1 puts on its buckets and marks for
// (pkg/controller/backupbucket/actuator.go L111-127, pkg/gcp/client/storage.go L131-136), so that
// marks of either reach the same rule: in a bucket of ours, a custom time is the deletion mark.
//
// The rule belongs to the bucket: EnsureBucket (the BackupBucket's reconcile, with the operator's
// credentials) puts it in place and keeps it, and an entry only marks and reads the rule back
// (writing it only when it is missing and its credentials may: a bucket not reconciled since this
// design). Generated credentials may mark (roles/storage.objectAdmin) and read the bucket's
// metadata (roles/storage.legacyBucketReader, see ReaderRole), so an entry completes its deferral
// with its own credentials, also on a seed that has no BackupBucket of its bucket (the source-
// entry of a migration).
//
// A store that does not mark a noncurrent generation by its generation (fake-gcs-server patches
// the live one whatever generation is named) gets, for that prefix only, the rule of earlier
// versions: {Delete if isLive false, noncurrentTimeBefore <tomorrow>, matchesPrefix <prefix>},
// written by the entry where its credentials may, kept by the bucket's reconcile while it covers
// a generation and dropped once it covers none.
const (
	// maxLifecycleRules is how many lifecycle rules GCS allows on one bucket.
	maxLifecycleRules = 100
	// maxRuleWrites bounds the read-modify-write rounds of the lifecycle when other writers
	// (other entries deferring at the same moment) keep changing it.
	maxRuleWrites = 8
)

// markedRule deletes the generations marked with a custom time, a day after marking and never
// before their retention allows: the bucket-wide rule of every bucket of ours, and
// provider-gcp's only rule.
func markedRule() storage.LifecycleRule {
	return storage.LifecycleRule{
		Action:    storage.LifecycleAction{Type: storage.DeleteAction},
		Condition: storage.LifecycleCondition{DaysSinceCustomTime: 1},
	}
}

// ForbiddenReadError reports credentials that may not read the bucket's metadata
// (storage.buckets.get), so that the deferral rule cannot be verified. It matches
// objectstore.ErrForbidden.
type ForbiddenReadError struct {
	Bucket string
	Cause  error
}

func (e *ForbiddenReadError) Error() string {
	return fmt.Sprintf("bucket %q: these credentials may not read the bucket's lifecycle (storage.buckets.get), so the deferred-deletion rule cannot be verified (%v); generated credentials are granted %s on their bucket by the BackupBucket's reconcile: reconcile the BackupBucket %q on its seed (annotation gardener.cloud/operation=reconcile), or grant the entry's service account %s on the bucket",
		e.Bucket, e.Cause, ReaderRole, e.Bucket, ReaderRole)
}

// Is makes errors.Is(err, objectstore.ErrForbidden) true.
func (e *ForbiddenReadError) Is(target error) bool { return target == objectstore.ErrForbidden }

// Unwrap returns the store's answer.
func (e *ForbiddenReadError) Unwrap() error { return e.Cause }

// DeferDeletion implements objectstore.Management: it checks that the bucket-wide rule is in place
// (writing it only where it is missing and these credentials may), marks every generation under
// prefix that has no custom time yet (so an interrupted deferral resumes; a custom time can only
// move forward), and reads the rule back once more: only then is the deferral reported.
func (s *management) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || len(prefix) < 2) {
		return objectstore.Deferral{}, objectstore.Invalidf("deferral prefix %q must end with '/'", prefix)
	}
	lc, err := s.ensureMarkedRule(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	unmarked, err := s.markAll(ctx, bucket, prefix, noncurrentCover(lc, prefix))
	if err != nil {
		return objectstore.Deferral{}, err
	}
	rule := fmt.Sprintf("lifecycle rule %s (every generation under %q carries a custom time)", describeRule(markedRule()), prefix)
	if unmarked {
		// Midnight UTC of tomorrow: every generation noncurrent now became so before it.
		tomorrow := time.Now().UTC().AddDate(0, 0, 1)
		nc := noncurrentRule(prefix, time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 0, 0, 0, 0, time.UTC))
		inPlace, err := s.ensureRules(ctx, bucket, prefix, []storage.LifecycleRule{nc})
		if errors.Is(err, objectstore.ErrForbidden) {
			return objectstore.Deferral{}, fmt.Errorf("%w: bucket %q does not keep custom times of noncurrent generations, and these credentials may not write the lifecycle rule %s that would cover those under %q instead: %w",
				objectstore.ErrUnsupported, bucket, describeRule(nc), prefix, err)
		}
		if err != nil {
			return objectstore.Deferral{}, err
		}
		inPlace = slices.DeleteFunc(inPlace, func(r storage.LifecycleRule) bool { return r.Condition.NoncurrentTimeBefore.IsZero() })
		rule = fmt.Sprintf("lifecycle rule %s (the generations under %q carry a custom time) and, for the noncurrent ones the store did not mark, %s", describeRule(markedRule()), prefix, describeRules(inPlace))
	}
	// Read back after marking: a concurrent writer of the lifecycle may have dropped the rule.
	have, err := s.readLifecycle(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	if !hasMarkedRule(have) {
		return objectstore.Deferral{}, fmt.Errorf("%w: bucket %q lost its %s while the generations under %q were marked; retried", objectstore.ErrThrottled, bucket, describeRule(markedRule()), prefix)
	}
	return objectstore.Deferral{Rule: rule}, nil
}

// ensureMarkedRule reads the bucket's lifecycle and, when the bucket-wide rule is missing, adds
// it (keeping every other rule) where these credentials may.
func (s *management) ensureMarkedRule(ctx context.Context, bucket string) (*rawstorage.BucketLifecycle, error) {
	have, err := s.readLifecycle(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if hasMarkedRule(have) {
		return have, nil
	}
	_, err = s.ensureRules(ctx, bucket, "", []storage.LifecycleRule{markedRule()})
	if errors.Is(err, objectstore.ErrForbidden) {
		return nil, &objectstore.RuleMissingError{Bucket: bucket, Why: "it lacks the " + describeRule(markedRule()), Cause: err}
	}
	if err != nil {
		return nil, err
	}
	return s.readLifecycle(ctx, bucket)
}

// markAll sets the custom time of every unmarked generation under prefix (a noncurrent one that
// became so before covered, which a noncurrent rule of the prefix deletes, needs none) and
// reports whether a noncurrent one could not be marked by its generation (the store marked
// another one instead).
func (s *management) markAll(ctx context.Context, bucket, prefix string, covered time.Time) (bool, error) {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name", "Generation", "CustomTime", "Deleted"}); err != nil {
		return false, err
	}
	now := time.Now().UTC()
	unmarkable := false
	var live, noncurrent []objectstore.ObjectVersion
	pager := iterator.NewPager(s.client.Bucket(bucket).Objects(ctx, q), s.listPageSize(), "")
	for {
		var attrs []*storage.ObjectAttrs
		next, err := pager.NextPage(&attrs)
		if err != nil {
			return false, classifyBucket(err)
		}
		for _, a := range attrs {
			if !a.CustomTime.IsZero() {
				continue
			}
			o := objectstore.ObjectVersion{Key: a.Name, Version: fmt.Sprint(a.Generation)}
			switch {
			case a.Deleted.IsZero():
				live = append(live, o)
			case !a.Deleted.Before(covered):
				noncurrent = append(noncurrent, o)
			}
		}
		if err := s.mark(ctx, bucket, live, now, nil); err != nil {
			return false, err
		}
		if err := s.mark(ctx, bucket, noncurrent, now, &unmarkable); err != nil {
			return false, err
		}
		live, noncurrent = live[:0], noncurrent[:0]
		if next == "" {
			return unmarkable, nil
		}
	}
}

// mark sets the custom time of the listed generations. A live one that is gone meanwhile needs
// none. With unmarkable set (noncurrent generations), a patch that the store applied to another
// generation than the one named, or answered as not found, sets *unmarkable instead of failing:
// the caller covers those generations otherwise.
func (s *management) mark(ctx context.Context, bucket string, objects []objectstore.ObjectVersion, at time.Time, unmarkable *bool) error {
	var missed atomic.Bool
	failed := objectstore.ForEachObject(ctx, objects, deferParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
		h, err := s.object(bucket, o)
		if err != nil {
			return err
		}
		got, err := h.Update(ctx, storage.ObjectAttrsToUpdate{CustomTime: at})
		err = classify(err)
		switch {
		case errors.Is(err, objectstore.ErrNotFound):
			if unmarkable != nil {
				missed.Store(true)
			}
			return nil
		case err != nil:
			return err
		case unmarkable != nil && (fmt.Sprint(got.Generation) != o.Version || got.CustomTime.IsZero()):
			missed.Store(true)
		}
		return nil
	})
	if len(failed) > 0 {
		return fmt.Errorf("marking %d objects for deferred deletion, first %q: %w", len(failed), failed[0].Object.Key, failed[0].Err)
	}
	if unmarkable != nil && missed.Load() {
		*unmarkable = true
	}
	return nil
}

// readLifecycle reads the bucket's lifecycle rules with storage.buckets.get alone (no ACLs, so
// roles/storage.legacyBucketReader suffices).
func (s *management) readLifecycle(ctx context.Context, bucket string) (*rawstorage.BucketLifecycle, error) {
	b, err := s.raw.Buckets.Get(bucket).Projection("noAcl").Fields("lifecycle", "metageneration").Context(ctx).Do()
	if err != nil {
		err = classify(err)
		if errors.Is(err, objectstore.ErrForbidden) {
			return nil, &ForbiddenReadError{Bucket: bucket, Cause: err}
		}
		return nil, fmt.Errorf("reading the lifecycle of bucket %q: %w", bucket, err)
	}
	return b.Lifecycle, nil
}

// markedRuleJSON is markedRule as the JSON API has it, nothing else in it.
const markedRuleJSON = `{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1}}`

// noncurrentCover is the latest noncurrentTimeBefore of the noncurrent rules of ours for prefix
// in the lifecycle read (zero: none).
func noncurrentCover(lc *rawstorage.BucketLifecycle, prefix string) time.Time {
	var latest time.Time
	if lc == nil {
		return latest
	}
	for _, r := range lc.Rule {
		if r == nil || r.Action == nil || r.Condition == nil || r.Condition.IsLive == nil || r.Condition.NoncurrentTimeBefore == "" {
			continue
		}
		before, err := time.Parse(time.DateOnly, r.Condition.NoncurrentTimeBefore)
		if err != nil {
			continue
		}
		want := noncurrentRule(prefix, before)
		b, err1 := json.Marshal(struct {
			Action    *rawstorage.BucketLifecycleRuleAction    `json:"action"`
			Condition *rawstorage.BucketLifecycleRuleCondition `json:"condition"`
		}{r.Action, r.Condition})
		w, err2 := json.Marshal(map[string]any{"action": map[string]string{"type": "Delete"}, "condition": noncurrentJSON(want)})
		if err1 == nil && err2 == nil && canonicalJSON(b) == canonicalJSON(w) && before.After(latest) {
			latest = before
		}
	}
	return latest
}

// noncurrentJSON is the condition of a noncurrent rule as the JSON API has it.
func noncurrentJSON(r storage.LifecycleRule) map[string]any {
	c := map[string]any{"isLive": false, "noncurrentTimeBefore": r.Condition.NoncurrentTimeBefore.Format(time.DateOnly)}
	if len(r.Condition.MatchesPrefix) > 0 {
		c["matchesPrefix"] = r.Condition.MatchesPrefix
	}
	return c
}

// canonicalJSON re-encodes a JSON document with sorted keys ("" if it is not JSON).
func canonicalJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// hasMarkedRule reports whether the lifecycle read has markedRule, exactly: no other condition
// narrows it.
func hasMarkedRule(lc *rawstorage.BucketLifecycle) bool {
	if lc == nil {
		return false
	}
	for _, r := range lc.Rule {
		if r == nil || r.Action == nil || r.Condition == nil {
			continue
		}
		b, err := json.Marshal(struct {
			Action    *rawstorage.BucketLifecycleRuleAction    `json:"action"`
			Condition *rawstorage.BucketLifecycleRuleCondition `json:"condition"`
		}{r.Action, r.Condition})
		if err == nil && string(b) == markedRuleJSON {
			return true
		}
	}
	return false
}
