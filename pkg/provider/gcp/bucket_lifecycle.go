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
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// abortUploadsRule removes the parts of multipart uploads abandoned for a week.
var abortUploadsRule = storage.LifecycleRule{
	Action:    storage.LifecycleAction{Type: storage.AbortIncompleteMPUAction},
	Condition: storage.LifecycleCondition{AgeInDays: 7},
}

// Values of gcpapi.AbortRuleLabel: GCS rules have no IDs, and an operator may keep a rule of the
// same form as abortUploadsRule; the label, written in the same request as the lifecycle, says
// whose the rule on the bucket is.
const (
	// abortRuleAdded: abortUploadsRule is in place, put there by this extension.
	abortRuleAdded = "added"
	// abortRuleNone: no abort rule of this extension's is in place (a hand-back that waits, or an
	// identical rule of somebody else's was there first, which does the same work). A hand-back
	// that completes removes the label with ManagedLabel: on a bucket without either, a rule of
	// that form is somebody else's (abortRuleOurs).
	abortRuleNone = "none"
)

// abortRuleOurs says whether a rule of abortUploadsRule's form on a bucket with labels is this
// extension's. A bucket of ours without the label is an earlier build's, whose abort rule it put
// there itself: at the bucket's creation, or at its adoption (provider-gcp's bucket has its one
// rule alone, notIncumbents).
func abortRuleOurs(labels map[string]string) bool {
	switch labels[gcpapi.AbortRuleLabel] {
	case abortRuleAdded:
		return true
	case "":
		return labels[gcpapi.ManagedLabel] == gcpapi.ManagedLabelValue
	}
	return false
}

// ownRule reports whether a lifecycle rule on a bucket with labels is this extension's. GCS
// rules have no IDs: ours are known by their exact form (markedRule, which provider-gcp writes
// too, and the per-prefix rules of deferrals, see deferralOf), and abortUploadsRule by
// gcpapi.AbortRuleLabel too (abortRuleOurs). Every other rule is somebody else's and is kept as
// it is.
func ownRule(r storage.LifecycleRule, labels map[string]string) bool {
	if reflect.DeepEqual(r, abortUploadsRule) {
		return abortRuleOurs(labels)
	}
	if reflect.DeepEqual(r, markedRule()) {
		return true
	}
	_, ours := deferralOf(r)
	return ours
}

// desiredLifecycle is the lifecycle EnsureBucket converges the bucket to: every rule of others
// where it is, and this extension's.
//
// Normally these are the abort-uploads rule, markedRule (the bucket's deferral rule, see
// DeferDeletion), and the per-prefix noncurrent rules of deferrals (see noncurrentRule) that
// still cover a generation nothing else covers. The per-prefix custom-time rules of earlier
// versions are dropped (markedRule covers what they cover), so are spent noncurrent rules.
//
// With handBack: provider-gcp v1.54.1's rule, markedRule, is the only one of ours
// (pkg/controller/backupbucket/actuator.go L191-204). A noncurrent rule still needed would be
// dropped, so the generations it covers are marked first (only with apply; without, the marking
// is returned as a change); where the store does not mark them, the rule is kept and wait says
// why the hand-back cannot complete yet (an *objectstore.HandBackWaitError; nil none).
//
// abortLabel is the value gcpapi.AbortRuleLabel is to have: abortUploadsRule is added where no rule
// of its form is; one of somebody else's is kept and does the work; the hand-back removes only
// ours (abortRuleOurs).
func (s *management) desiredLifecycle(ctx context.Context, bucket string, have []storage.LifecycleRule, labels map[string]string, handBack, apply bool) (_ storage.Lifecycle, abortLabel string, _ []objectstore.BucketChange, wait error, _ error) {
	var ours, others []storage.LifecycleRule
	var marks []objectstore.BucketChange
	var blocked []string
	blockedGenerations := 0
	keep := func(r storage.LifecycleRule) {
		if !slices.ContainsFunc(ours, func(k storage.LifecycleRule) bool { return reflect.DeepEqual(k, r) }) {
			ours = append(ours, r)
		}
	}
	abortOurs := abortRuleOurs(labels)
	abortTheirs := !abortOurs && slices.ContainsFunc(have, func(r storage.LifecycleRule) bool { return reflect.DeepEqual(r, abortUploadsRule) })
	abortLabel = abortRuleNone
	if !handBack && !abortTheirs {
		keep(abortUploadsRule)
		abortLabel = abortRuleAdded
	}
	keep(markedRule())
	for _, r := range have {
		switch {
		case !ownRule(r, labels):
			others = append(others, r)
		case r.Condition.NoncurrentTimeBefore.IsZero():
			// abortUploadsRule and markedRule are in place; the old per-prefix rules are dropped.
		default:
			prefix, _ := deferralOf(r)
			uncovered, err := s.uncoveredNoncurrent(ctx, bucket, prefix, r.Condition.NoncurrentTimeBefore)
			if err != nil {
				return storage.Lifecycle{}, "", nil, nil, err
			}
			switch {
			case len(uncovered) == 0:
				// spent: every generation it covers is gone or marked
			case !handBack:
				keep(r)
			case !apply:
				marks = append(marks, objectstore.BucketChange{Setting: fmt.Sprintf("custom time of %d noncurrent generations under %q", len(uncovered), prefix), Action: objectstore.ChangeCreate,
					Detail: "so that " + describeRule(markedRule()) + " deletes them once the rule " + describeRule(r) + " is gone"})
			default:
				unmarkable := false
				if err := s.mark(ctx, bucket, uncovered, time.Now().UTC(), &unmarkable); err != nil {
					return storage.Lifecycle{}, "", nil, nil, err
				}
				if unmarkable {
					keep(r) // nothing is lost while the hand-back waits
					blocked = append(blocked, describeRule(r))
					blockedGenerations += len(uncovered)
				}
			}
		}
	}
	if len(blocked) > 0 {
		wait = &objectstore.HandBackWaitError{Bucket: bucket, Why: fmt.Sprintf("%d noncurrent generations are deleted only by its lifecycle rules %s, and the store does not keep custom times on noncurrent generations; "+
			"provider-gcp replaces the lifecycle with its one rule, so they would never be deleted: the rules stay, and the hand-back finishes by itself once their retention has ended and the rules deleted them (or unset handBack to keep this extension in charge)",
			blockedGenerations, strings.Join(blocked, ", "))}
	}
	// Ours first, then the rules of others in their order: after one write, the order is stable.
	want := append(ours, others...)
	return storage.Lifecycle{Rules: want}, abortLabel, marks, wait, nil
}

// lifecycleDiff names the rules created and deleted between have and want.
func lifecycleDiff(have, want []storage.LifecycleRule) []objectstore.BucketChange {
	var out []objectstore.BucketChange
	in := func(rules []storage.LifecycleRule, r storage.LifecycleRule) bool {
		return slices.ContainsFunc(rules, func(x storage.LifecycleRule) bool { return reflect.DeepEqual(x, r) })
	}
	for _, r := range want {
		if !in(have, r) {
			out = append(out, objectstore.BucketChange{Setting: "lifecycle rule " + describeRule(r), Action: objectstore.ChangeCreate})
		}
	}
	for _, r := range have {
		if !in(want, r) {
			out = append(out, objectstore.BucketChange{Setting: "lifecycle rule " + describeRule(r), Action: objectstore.ChangeDelete})
		}
	}
	if len(out) == 0 {
		out = append(out, objectstore.BucketChange{Setting: "lifecycle rules", Action: objectstore.ChangeUpdate, Detail: "a rule read back twice is written once"})
	}
	return out
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
