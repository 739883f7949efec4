// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassify(t *testing.T) {
	respErr := func(status int, code string) error {
		return fmt.Errorf("call: %w", &azcore.ResponseError{StatusCode: status, ErrorCode: code})
	}
	cases := []struct {
		name string
		err  error
		want error // nil: unclassified
	}{
		{"bad signature (Azure)", respErr(403, "AuthenticationFailed"), objectstore.ErrUnauthenticated},
		{"not authorized", respErr(403, "AuthorizationFailure"), objectstore.ErrForbidden},
		{"missing permission", respErr(403, "AuthorizationPermissionMismatch"), objectstore.ErrForbidden},
		{"server busy", respErr(503, "ServerBusy"), objectstore.ErrThrottled},
		{"429 without a code", respErr(429, ""), objectstore.ErrThrottled},
		{"missing container", respErr(404, "ContainerNotFound"), objectstore.ErrBucketNotFound},
		{"missing blob", respErr(404, "BlobNotFound"), objectstore.ErrNotFound},
		{"immutable blob", respErr(409, "BlobImmutableDueToPolicy"), objectstore.ErrObjectLocked},
		{"legal hold", respErr(409, "BlobImmutableDueToLegalHold"), objectstore.ErrObjectLocked},
		{"not implemented", respErr(501, "NotImplemented"), objectstore.ErrUnsupported},
		{"ARM: expired token", respErr(401, "ExpiredAuthenticationToken"), objectstore.ErrUnauthenticated},
		{"ARM: role missing", respErr(403, "AuthorizationFailed"), objectstore.ErrForbidden},
		{"ARM: account name taken", respErr(409, "StorageAccountAlreadyTaken"), objectstore.ErrOwnedByOther},
		{"ARM: account quota", respErr(409, "StorageAccountCountLimitExceeded"), objectstore.ErrQuotaExceeded},
		{"ARM: throttled", respErr(429, "TooManyRequests"), objectstore.ErrThrottled},
		{"ARM: missing group", respErr(404, "ResourceGroupNotFound"), objectstore.ErrNotFound},
		{"ARM: bad subscription", respErr(404, "SubscriptionNotFound"), objectstore.ErrInvalidConfig},
		{"Entra ID refused the secret", fmt.Errorf("token: %w", &azidentity.AuthenticationFailedError{RawResponse: &http.Response{StatusCode: http.StatusUnauthorized}}), objectstore.ErrUnauthenticated},
		// No answer from Entra ID (TLS not trusted, network): nothing was refused.
		{"Entra ID not reached", fmt.Errorf("token: %w", &azidentity.AuthenticationFailedError{}), nil},
		{"500 stays unclassified (the SDK retried it)", respErr(500, "InternalError"), nil},
		{"plain error", errors.New("boom"), nil},
	}
	sentinels := []error{objectstore.ErrBucketNotFound, objectstore.ErrNotFound, objectstore.ErrUnauthenticated, objectstore.ErrForbidden,
		objectstore.ErrThrottled, objectstore.ErrObjectLocked, objectstore.ErrUnsupported, objectstore.ErrOwnedByOther,
		objectstore.ErrQuotaExceeded, objectstore.ErrInvalidConfig}
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
