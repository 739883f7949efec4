// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect

import (
	"errors"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestFailoverRefusal: every reader of the serve decision refuses an entry whose BackupBucket
// records a failover the configuration no longer matches, and only then.
func TestFailoverRefusal(t *testing.T) {
	rec := &FailoverRecord{CopyBucket: "b-copy"}
	for _, tc := range []struct {
		name    string
		rec     *FailoverRecord
		place   *CopyPlace
		refused bool
	}{
		{"no record, no copy", nil, nil, false},
		{"no record, a copy", nil, &CopyPlace{Bucket: "b-copy"}, false},
		{"record, its copy declared", rec, &CopyPlace{Bucket: "b-copy"}, false},
		{"record, copy: removed", rec, nil, true},
		{"record, another copy bucket", rec, &CopyPlace{Bucket: "b-copy2"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, refused := failoverRefusal(tc.rec, tc.place)
			if refused != tc.refused {
				t.Fatalf("refused = %v, want %v", refused, tc.refused)
			}
			if !refused {
				return
			}
			if plan.FromCopy || plan.Reason != ServeReasonRefused || !errors.Is(plan.Refused, objectstore.ErrInvalidConfig) {
				t.Fatalf("plan = %+v, want refused with ErrInvalidConfig and not served from a copy", plan)
			}
		})
	}
}
