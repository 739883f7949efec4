// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// reasonClasses maps the reasons of GCS JSON API errors (errors[].reason) to the core's
// sentinels; they win over the HTTP status.
var reasonClasses = map[string]error{
	"rateLimitExceeded":     objectstore.ErrThrottled,
	"userRateLimitExceeded": objectstore.ErrThrottled,
	"backendError":          objectstore.ErrThrottled,
	"dailyLimitExceeded":    objectstore.ErrQuotaExceeded,
	"quotaExceeded":         objectstore.ErrQuotaExceeded,
	"invalid":               objectstore.ErrInvalidConfig,
	"invalidArgument":       objectstore.ErrInvalidConfig,
	"accountDisabled":       objectstore.ErrForbidden,
	"userProjectMissing":    objectstore.ErrInvalidConfig,
}

// statusClasses are the classes GCS gives HTTP statuses besides those every store shares (see
// objectstore.ClassOfStatus), for errors no reason decides: the JSON API answers a bad request
// and refused credentials with these statuses.
var statusClasses = map[int]error{
	http.StatusBadRequest:   objectstore.ErrInvalidConfig,
	http.StatusUnauthorized: objectstore.ErrUnauthenticated,
}

// classify wraps err with the sentinel of its class; unknown errors are returned as they are.
func classify(err error) error { return objectstore.Classify(err, classOf) }

func classOf(err error) error {
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return objectstore.ErrBucketNotFound
	case errors.Is(err, storage.ErrObjectNotExist):
		return objectstore.ErrNotFound
	}
	// A refused token exchange (a wrong or revoked key, an expired workload identity token) is
	// an authentication failure whatever status the token endpoint chose.
	var refused *tokenRefusedError
	if errors.As(err, &refused) {
		return objectstore.ErrUnauthenticated
	}
	var authErr *auth.Error
	if errors.As(err, &authErr) && authErr.Response != nil && authErr.Response.StatusCode >= 400 && authErr.Response.StatusCode < 500 {
		return objectstore.ErrUnauthenticated
	}
	var apiErr *googleapi.Error
	if errors.As(err, &apiErr) {
		for _, e := range apiErr.Errors {
			if class, ok := reasonClasses[e.Reason]; ok {
				return class
			}
		}
		return objectstore.ClassOfStatus(apiErr.Code, statusClasses)
	}
	return nil
}

// refusedTokens is the transport of token requests. The auth library reports a refused token
// exchange as an untyped error; this turns a 4xx answer of the token endpoint into a typed
// *tokenRefusedError first, so that it is classified as ErrUnauthenticated without reading text.
type refusedTokens struct {
	next http.RoundTripper
	// keys names the secret keys whose credentials are exchanged, for the message.
	keys string
}

func (t refusedTokens) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return resp, err
	}
	resp.Body.Close()
	return nil, &tokenRefusedError{status: resp.StatusCode, endpoint: req.URL.Host, keys: t.keys}
}

// tokenRefusedError is a token endpoint's refusal of the credentials. The response body is not
// kept: it may echo what was sent.
type tokenRefusedError struct {
	status   int
	endpoint string
	keys     string // the secret keys the credentials come from ("" if unknown)
}

func (e *tokenRefusedError) Error() string {
	if e.keys == "" {
		return fmt.Sprintf("the token endpoint %s refused the credentials (HTTP %d)", e.endpoint, e.status)
	}
	return fmt.Sprintf("the token endpoint %s refused the credentials of the %s (HTTP %d)", e.endpoint, e.keys, e.status)
}

// Is makes errors.Is(err, objectstore.ErrUnauthenticated) true.
func (e *tokenRefusedError) Is(target error) bool { return target == objectstore.ErrUnauthenticated }

// statusOf returns the HTTP status of a GCS API error (0 for other errors).
func statusOf(err error) int {
	var apiErr *googleapi.Error
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return 0
}

// classifyBucket classifies errors of requests on a bucket's objects where a 404 can only mean
// that the bucket is missing (uploads).
func classifyBucket(err error) error {
	if err != nil && statusOf(err) == http.StatusNotFound {
		return fmt.Errorf("%w: %w", objectstore.ErrBucketNotFound, err)
	}
	return classify(err)
}

func iamError(what string, err error) error {
	var apiErr *googleapi.Error
	if errors.As(err, &apiErr) && apiErr.Code == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %w", what, objectstore.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, classify(err))
}

// isLimitReached reports a 429 whose RetryInfo asks to wait an hour or more: GCP's answer at the
// project's limit of service accounts and at an account's limit of keys ("Maximum number of keys
// on account reached."), both with a RetryInfo of 86401 s; a rate limit asks for seconds.
func isLimitReached(err error) bool {
	var apiErr *googleapi.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusTooManyRequests {
		return false
	}
	for _, d := range apiErr.Details {
		m, ok := d.(map[string]any)
		if !ok || m["@type"] != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		delay, _ := m["retryDelay"].(string)
		if d, err := time.ParseDuration(delay); err == nil && d >= time.Hour {
			return true
		}
	}
	return false
}
