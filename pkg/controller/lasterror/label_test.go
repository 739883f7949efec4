// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package lasterror_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestLabelIsWhatStatusShows(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"success", nil, "succeeded"},
		{"deletion resumes", lasterror.For(&lasterror.InProgressError{Bucket: "b", Deleted: 3}), "in_progress"},
		{"refused credentials", lasterror.For(fmt.Errorf("listing: %w", objectstore.ErrUnauthenticated)), "ERR_INFRA_UNAUTHENTICATED"},
		{"throttled, requeued", lasterror.For(fmt.Errorf("deleting: %w", objectstore.ErrThrottled)), "ERR_INFRA_RATE_LIMITS_EXCEEDED"},
		{"locked, requeued", lasterror.For(&lasterror.LockedObjectsError{Bucket: "b", Count: 1}), "ERR_INFRA_DEPENDENCIES"},
		{"classified but not yet mapped", fmt.Errorf("x: %w", objectstore.ErrInvalidConfig), "ERR_CONFIGURATION_PROBLEM"},
		{"unclassified", errors.New("boom"), "error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lasterror.Label(c.err); got != c.want {
				t.Errorf("Result(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}
