// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassOfStatus(t *testing.T) {
	own := map[int]error{
		http.StatusUnauthorized: objectstore.ErrUnauthenticated, // a class the shared table lacks
		http.StatusNotFound:     objectstore.ErrBucketNotFound,  // a store's own meaning wins
	}
	for _, tc := range []struct {
		name string
		code int
		own  map[int]error
		want error
	}{
		{"forbidden", http.StatusForbidden, nil, objectstore.ErrForbidden},
		{"not found", http.StatusNotFound, nil, objectstore.ErrNotFound},
		{"too many requests", http.StatusTooManyRequests, nil, objectstore.ErrThrottled},
		{"service unavailable", http.StatusServiceUnavailable, nil, objectstore.ErrThrottled},
		{"not implemented", http.StatusNotImplemented, nil, objectstore.ErrUnsupported},
		{"unauthorized is no shared class", http.StatusUnauthorized, nil, nil},
		{"bad request is no shared class", http.StatusBadRequest, nil, nil},
		{"internal server error", http.StatusInternalServerError, nil, nil},
		{"ok", http.StatusOK, nil, nil},
		{"no status", 0, nil, nil},
		{"own class", http.StatusUnauthorized, own, objectstore.ErrUnauthenticated},
		{"own class wins", http.StatusNotFound, own, objectstore.ErrBucketNotFound},
		{"shared class beside own ones", http.StatusForbidden, own, objectstore.ErrForbidden},
		{"neither", http.StatusConflict, own, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := objectstore.ClassOfStatus(tc.code, tc.own); got != tc.want {
				t.Errorf("ClassOfStatus(%d) = %v, want %v", tc.code, got, tc.want)
			}
		})
	}
}

func TestClassifyUnreachable(t *testing.T) {
	none := func(error) error { return nil }
	refused := &url.Error{Op: "Get", URL: "http://store", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection closed before the response", &url.Error{Op: "Head", URL: "http://store", Err: io.EOF}, true},
		{"cut short", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{"name does not resolve", &net.DNSError{Err: "no such host", Name: "store"}, true},
		{"the caller's deadline", &url.Error{Op: "Get", URL: "http://store", Err: context.DeadlineExceeded}, false},
		{"the caller cancelled", fmt.Errorf("list: %w", context.Canceled), false},
		{"anything else", errors.New("boom"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := objectstore.Classify(c.err, none)
			if got := errors.Is(err, objectstore.ErrUnreachable); got != c.want {
				t.Fatalf("Classify(%v) unreachable = %v; want %v", c.err, got, c.want)
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("Classify lost the store's error: %v", err)
			}
		})
	}
	// A class the store knows wins.
	if err := objectstore.Classify(refused, func(error) error { return objectstore.ErrThrottled }); errors.Is(err, objectstore.ErrUnreachable) {
		t.Fatalf("the store's class was overridden: %v", err)
	}
}

// TestRuleMissingError: the one error of a deferral rule the entry's credentials may not write
// (aws and gcp): forbidden, with the store's answer beneath, saying which bucket to reconcile.
func TestRuleMissingError(t *testing.T) {
	cause := fmt.Errorf("%w: AccessDenied", objectstore.ErrForbidden)
	err := fmt.Errorf("deferring: %w", &objectstore.RuleMissingError{Bucket: "b1", Why: "lifecycle rule r: it is missing", Cause: cause})
	var missing *objectstore.RuleMissingError
	if !errors.As(err, &missing) || !errors.Is(err, objectstore.ErrForbidden) || !errors.Is(err, cause) || errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("%v: want a RuleMissingError matching ErrForbidden and its cause only", err)
	}
	for _, want := range []string{`bucket "b1": lifecycle rule r: it is missing, and these credentials`, "AccessDenied", `reconcile the BackupBucket "b1"`, "gardener.cloud/operation=reconcile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
