// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestClassification: Swift's and Keystone's own statuses, those every store shares, and
// Keystone's 404 for an unknown application credential at authentication.
func TestClassification(t *testing.T) {
	status := func(code int) error {
		return fmt.Errorf("request: %w", gophercloud.ErrUnexpectedResponseCode{Actual: code})
	}
	for _, c := range []struct {
		name string
		err  error
		want error // nil: no class
	}{
		{"401", classify(status(401)), objectstore.ErrUnauthenticated},
		{"403", classify(status(403)), objectstore.ErrForbidden},
		{"404", classify(status(404)), objectstore.ErrNotFound},
		{"413", classify(status(413)), objectstore.ErrInvalidConfig},
		{"498, Swift's rate limit", classify(status(498)), objectstore.ErrThrottled},
		{"503", classify(status(503)), objectstore.ErrThrottled},
		{"409: no class", classify(status(409)), nil},
		{"status line 498", classifyStatus("498 Rate Limited"), objectstore.ErrThrottled},
		{"status line 401", classifyStatus("401 Unauthorized"), objectstore.ErrUnauthenticated},
		{"status line without a code", classifyStatus("oops"), nil},
		{"authentication 404: an unknown application credential", classifyAuthentication(status(404)), objectstore.ErrUnauthenticated},
		{"authentication 401", classifyAuthentication(status(401)), objectstore.ErrUnauthenticated},
		{"authentication 503", classifyAuthentication(status(503)), objectstore.ErrThrottled},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, class := range []error{objectstore.ErrUnauthenticated, objectstore.ErrForbidden, objectstore.ErrNotFound, objectstore.ErrInvalidConfig, objectstore.ErrThrottled} {
				if got := errors.Is(c.err, class); got != (class == c.want) {
					t.Fatalf("%v: errors.Is(%v) = %v", c.err, class, got)
				}
			}
		})
	}
	if classify(nil) != nil {
		t.Fatal("classify(nil) is not nil")
	}
}
