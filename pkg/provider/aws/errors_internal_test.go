// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassify(t *testing.T) {
	apiErr := func(code string) error {
		return fmt.Errorf("operation error S3: X: %w", &smithy.GenericAPIError{Code: code, Message: "m"})
	}
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("no body")}}
	}
	cases := []struct {
		name string
		err  error
		want error // nil: left unclassified
	}{
		{"bad key id", apiErr("InvalidAccessKeyId"), objectstore.ErrUnauthenticated},
		{"bad secret", apiErr("SignatureDoesNotMatch"), objectstore.ErrUnauthenticated},
		{"access denied", apiErr("AccessDenied"), objectstore.ErrForbidden},
		{"slow down", apiErr("SlowDown"), objectstore.ErrThrottled},
		{"503 without a body", status(http.StatusServiceUnavailable), objectstore.ErrThrottled},
		{"retry quota", ratelimit.QuotaExceededError{}, objectstore.ErrThrottled},
		{"someone else's bucket", apiErr("BucketAlreadyExists"), objectstore.ErrOwnedByOther},
		{"missing bucket", apiErr("NoSuchBucket"), objectstore.ErrBucketNotFound},
		{"head 404", status(http.StatusNotFound), objectstore.ErrNotFound},
		{"not empty", apiErr("BucketNotEmpty"), objectstore.ErrBucketNotEmpty},
		{"not implemented", apiErr("NotImplemented"), objectstore.ErrUnsupported},
		{"501", status(http.StatusNotImplemented), objectstore.ErrUnsupported},
		{"bucket quota", apiErr("TooManyBuckets"), objectstore.ErrQuotaExceeded},
		{"bad location", apiErr("InvalidLocationConstraint"), objectstore.ErrInvalidConfig},
		{"unknown", apiErr("SomethingNew"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.err)
			if c.want == nil {
				if got != c.err {
					t.Fatalf("an unknown error was changed: %v", got)
				}
				return
			}
			if !errors.Is(got, c.want) {
				t.Fatalf("classify(%v) = %v; want %v", c.err, got, c.want)
			}
			if !errors.Is(got, c.err) && !errors.As(got, new(smithy.APIError)) && !errors.As(got, new(*awshttp.ResponseError)) {
				t.Fatalf("the SDK error is lost from the chain: %v", got)
			}
		})
	}
}

func TestClassifyCode(t *testing.T) {
	for code, want := range map[string]error{
		"NoSuchKey":     objectstore.ErrNotFound,
		"NoSuchVersion": objectstore.ErrNotFound,
		"SlowDown":      objectstore.ErrThrottled,
		"InternalError": objectstore.ErrThrottled,
		"AccessDenied":  objectstore.ErrForbidden,
		// MinIO's quorum errors and its other "retry" answers.
		"SlowDownRead":               objectstore.ErrThrottled,
		"SlowDownWrite":              objectstore.ErrThrottled,
		"ServerBusy":                 objectstore.ErrThrottled,
		"TooManyRequests":            objectstore.ErrThrottled,
		"XMinioServerNotInitialized": objectstore.ErrThrottled,
	} {
		if err := classifyCode(code, "m"); !errors.Is(err, want) {
			t.Errorf("classifyCode(%q) = %v; want %v", code, err, want)
		}
	}
}
