// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassify(t *testing.T) {
	apiErr := func(code int, reason string) error {
		e := &googleapi.Error{Code: code, Message: "m"}
		if reason != "" {
			e.Errors = []googleapi.ErrorItem{{Reason: reason}}
		}
		return fmt.Errorf("call: %w", e)
	}
	cases := []struct {
		name string
		err  error
		want error // nil: unclassified
	}{
		{"missing bucket", storage.ErrBucketNotExist, objectstore.ErrBucketNotFound},
		{"missing object", storage.ErrObjectNotExist, objectstore.ErrNotFound},
		{"refused token", &url.Error{Op: "Post", URL: "https://oauth2.googleapis.com/token", Err: &tokenRefusedError{status: 400, endpoint: "oauth2.googleapis.com"}}, objectstore.ErrUnauthenticated},
		{"401", apiErr(401, "authError"), objectstore.ErrUnauthenticated},
		{"403 forbidden", apiErr(403, "forbidden"), objectstore.ErrForbidden},
		{"429 rate limit", apiErr(429, "rateLimitExceeded"), objectstore.ErrThrottled},
		{"503 without reason", apiErr(503, ""), objectstore.ErrThrottled},
		{"403 with a rate-limit reason", apiErr(403, "userRateLimitExceeded"), objectstore.ErrThrottled},
		{"daily limit", apiErr(403, "dailyLimitExceeded"), objectstore.ErrQuotaExceeded},
		{"bad request", apiErr(400, "invalid"), objectstore.ErrInvalidConfig},
		{"404 bucket from a raw call", apiErr(404, "notFound"), objectstore.ErrNotFound},
		{"500 stays unclassified (the SDK retried it)", apiErr(500, "internalError"), nil},
		{"plain error", errors.New("boom"), nil},
	}
	sentinels := []error{objectstore.ErrBucketNotFound, objectstore.ErrNotFound, objectstore.ErrUnauthenticated, objectstore.ErrForbidden,
		objectstore.ErrThrottled, objectstore.ErrQuotaExceeded, objectstore.ErrInvalidConfig}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.err)
			if !errors.Is(got, c.err) {
				t.Fatalf("classify lost the original error: %v", got)
			}
			for _, s := range sentinels {
				if is := errors.Is(got, s); is != (s == c.want) {
					t.Fatalf("errors.Is(%v, %v) = %v; want class %v", got, s, is, c.want)
				}
			}
		})
	}
}

func TestRefusedTokensTransport(t *testing.T) {
	for _, c := range []struct {
		status  int
		refused bool
	}{{200, false}, {400, true}, {401, true}, {403, true}, {429, false}, {503, false}} {
		rt := refusedTokens{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: c.status, Body: http.NoBody}, nil
		})}
		req, _ := http.NewRequest(http.MethodPost, "https://sts.example/v1/token", nil)
		resp, err := rt.RoundTrip(req)
		if refused := errors.Is(err, objectstore.ErrUnauthenticated); refused != c.refused || (refused && resp != nil) {
			t.Fatalf("status %d: resp %v, err %v; want refused=%v", c.status, resp, err, c.refused)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestIsLimitReached(t *testing.T) {
	withRetry := func(code int, delay string) error {
		e := &googleapi.Error{Code: code, Message: "m"}
		if delay != "" {
			e.Details = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}}
		}
		return fmt.Errorf("creating: %w", e)
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"429 asking to wait a day (GCP's answer at a limit)", withRetry(429, "86401s"), true},
		{"429 asking to wait an hour", withRetry(429, "3600s"), true},
		{"429 asking to wait seconds (a rate limit)", withRetry(429, "10s"), false},
		{"429 without RetryInfo", withRetry(429, ""), false},
		{"403 asking to wait a day", withRetry(403, "86401s"), false},
		{"not an API error", errors.New("connection reset"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := isLimitReached(c.err); got != c.want {
				t.Fatalf("isLimitReached = %v; want %v", got, c.want)
			}
		})
	}
}
