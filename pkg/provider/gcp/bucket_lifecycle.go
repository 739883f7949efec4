// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// abortUploadsRule removes the parts of multipart uploads abandoned for a week.
var abortUploadsRule = storage.LifecycleRule{
	Action:    storage.LifecycleAction{Type: storage.AbortIncompleteMPUAction},
	Condition: storage.LifecycleCondition{AgeInDays: 7},
}

// desiredLifecycle is the lifecycle EnsureBucket converges the bucket to.
//
// Normally: the abort-uploads rule, markedRule (the bucket's deferral rule, see deferral.go), and
// the per-prefix noncurrent rules of deferrals (see deferral_rules.go) that still cover a
// generation nothing else covers. The per-prefix custom-time rules of earlier versions are
// dropped (markedRule covers what they cover), so are spent noncurrent rules; any other rule is
// drift and removed.
//
// With handBack: exactly provider-gcp v1.54.1's lifecycle, markedRule alone
// (pkg/controller/backupbucket/actuator.go L191-204: any other lifecycle it replaces by that one
// rule). A noncurrent rule still needed would be dropped by it, so the generations it covers are
// marked first; where the store does not mark them, the hand-back is refused.
func (s *management) desiredLifecycle(ctx context.Context, bucket string, have []storage.LifecycleRule, handBack bool) (storage.Lifecycle, error) {
	var kept []storage.LifecycleRule
	for _, r := range have {
		if r.Condition.NoncurrentTimeBefore.IsZero() {
			continue
		}
		prefix, ours := deferralOf(r)
		if !ours || slices.ContainsFunc(kept, func(k storage.LifecycleRule) bool { return reflect.DeepEqual(k, r) }) {
			continue
		}
		uncovered, err := s.uncoveredNoncurrent(ctx, bucket, prefix, r.Condition.NoncurrentTimeBefore)
		if err != nil {
			return storage.Lifecycle{}, err
		}
		if len(uncovered) == 0 {
			continue // spent: every generation it covers is gone or marked
		}
		if handBack {
			unmarkable := false
			if err := s.mark(ctx, bucket, uncovered, time.Now().UTC(), &unmarkable); err != nil {
				return storage.Lifecycle{}, err
			}
			if unmarkable {
				return storage.Lifecycle{}, &HandBackBlockedError{Bucket: bucket, Rule: describeRule(r), Generations: len(uncovered)}
			}
			continue
		}
		kept = append(kept, r)
	}
	if handBack {
		return storage.Lifecycle{Rules: []storage.LifecycleRule{markedRule()}}, nil
	}
	return storage.Lifecycle{Rules: append([]storage.LifecycleRule{abortUploadsRule, markedRule()}, kept...)}, nil
}

// uncoveredNoncurrent lists the noncurrent generations under prefix that became noncurrent before
// before and carry no custom time: what a noncurrent rule covers and markedRule does not.
func (s *management) uncoveredNoncurrent(ctx context.Context, bucket, prefix string, before time.Time) ([]objectstore.ObjectVersion, error) {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name", "Generation", "CustomTime", "Deleted"}); err != nil {
		return nil, err
	}
	var out []objectstore.ObjectVersion
	it := s.client.Bucket(bucket).Objects(ctx, q)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, classifyBucket(err)
		}
		if !a.Deleted.IsZero() && a.Deleted.Before(before) && a.CustomTime.IsZero() {
			out = append(out, objectstore.ObjectVersion{Key: a.Name, Version: fmt.Sprint(a.Generation)})
		}
	}
}

// HandBackBlockedError reports a hand-back that would leave generations no rule deletes:
// provider-gcp keeps only markedRule, and these noncurrent generations carry no custom time
// because the store does not mark noncurrent generations by generation. It matches
// objectstore.ErrInvalidConfig: handBack cannot be honoured now.
type HandBackBlockedError struct {
	Bucket      string
	Rule        string
	Generations int
}

func (e *HandBackBlockedError) Error() string {
	return fmt.Sprintf("providerConfig.handBack: bucket %q has %d noncurrent generations that only its lifecycle rule %s deletes, and the store does not keep custom times on noncurrent generations; provider-gcp replaces the lifecycle with its one rule, so they would never be deleted: keep this extension in charge (unset handBack) until their retention has ended and the rule deleted them, then hand back",
		e.Bucket, e.Generations, e.Rule)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *HandBackBlockedError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }
