// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
)

// deferralCovers reads back, with the raw client, that every generation under prefix is taken in
// by a delete rule of the bucket: the generation (live or noncurrent) carries a custom time and a
// rule deletes by daysSinceCustomTime, or a noncurrent one is older than a rule's
// noncurrentTimeBefore; either rule scoped to a prefix the key starts with (or the whole bucket).
func deferralCovers(client *storage.Client) func(ctx context.Context, bucket, prefix string) error {
	return func(ctx context.Context, bucket, prefix string) error {
		attrs, err := client.Bucket(bucket).Attrs(ctx)
		if err != nil {
			return err
		}
		matches := func(r storage.LifecycleRule, key string) bool {
			return r.Action.Type == storage.DeleteAction && (len(r.Condition.MatchesPrefix) == 0 ||
				slices.ContainsFunc(r.Condition.MatchesPrefix, func(p string) bool { return strings.HasPrefix(key, p) }))
		}
		it := client.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix, Versions: true})
		n := 0
		for {
			o, err := it.Next()
			if err == iterator.Done {
				break
			}
			if err != nil {
				return err
			}
			n++
			covered := slices.ContainsFunc(attrs.Lifecycle.Rules, func(r storage.LifecycleRule) bool {
				if !matches(r, o.Name) {
					return false
				}
				if r.Condition.DaysSinceCustomTime > 0 && !o.CustomTime.IsZero() {
					return true
				}
				return !o.Deleted.IsZero() && r.Condition.Liveness == storage.Archived && o.Deleted.Before(r.Condition.NoncurrentTimeBefore)
			})
			if !covered {
				return fmt.Errorf("generation %d of %q (custom time %v, noncurrent since %v) is taken in by no delete rule of %v", o.Generation, o.Name, o.CustomTime, o.Deleted, attrs.Lifecycle.Rules)
			}
		}
		if n == 0 {
			return fmt.Errorf("no generations under %q", prefix)
		}
		return nil
	}
}
