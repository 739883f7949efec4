// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Plan is p's PlanBucket of b as "action setting" lines, in the plan's order; an error fails t.
func Plan(ctx context.Context, t testing.TB, p objectstore.BucketPlanner, b objectstore.Bucket) []string {
	t.Helper()
	changes, err := p.PlanBucket(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range changes {
		out = append(out, string(c.Action)+" "+c.Setting)
	}
	return out
}
