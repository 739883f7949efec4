package azure

import (
	"errors"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

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
		{"500 stays unclassified (the SDK retried it)", respErr(500, "InternalError"), nil},
		{"plain error", errors.New("boom"), nil},
	}
	sentinels := []error{objectstore.ErrBucketNotFound, objectstore.ErrNotFound, objectstore.ErrUnauthenticated, objectstore.ErrForbidden,
		objectstore.ErrThrottled, objectstore.ErrObjectLocked, objectstore.ErrUnsupported}
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
