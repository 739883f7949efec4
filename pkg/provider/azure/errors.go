package azure

import (
	"errors"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// codeClasses maps Azure Storage error codes (x-ms-error-code) to the core's sentinels; they win
// over the HTTP status.
var codeClasses = map[string]error{
	"AuthenticationFailed":              objectstore.ErrUnauthenticated,
	"InvalidAuthenticationInfo":         objectstore.ErrUnauthenticated,
	"AuthorizationFailure":              objectstore.ErrForbidden,
	"AuthorizationPermissionMismatch":   objectstore.ErrForbidden,
	"AuthorizationSourceIPMismatch":     objectstore.ErrForbidden,
	"AuthorizationProtocolMismatch":     objectstore.ErrForbidden,
	"InsufficientAccountPermissions":    objectstore.ErrForbidden,
	"AccountIsDisabled":                 objectstore.ErrForbidden,
	"ServerBusy":                        objectstore.ErrThrottled,
	"OperationTimedOut":                 objectstore.ErrThrottled,
	"ContainerNotFound":                 objectstore.ErrBucketNotFound,
	"BlobNotFound":                      objectstore.ErrNotFound,
	"ResourceNotFound":                  objectstore.ErrNotFound,
	"InvalidResourceName":               objectstore.ErrInvalidConfig,
	"InvalidQueryParameterValue":        objectstore.ErrInvalidConfig,
	"FeatureNotSupported":               objectstore.ErrUnsupported,
	"NotImplemented":                    objectstore.ErrUnsupported,
	"BlobImmutableDueToPolicy":          objectstore.ErrObjectLocked,
	"BlobImmutableDueToLegalHold":       objectstore.ErrObjectLocked,
	"ContainerImmutabilityPolicyLocked": objectstore.ErrObjectLocked,
	// Azure Resource Manager's codes.
	"InvalidAuthenticationToken":          objectstore.ErrUnauthenticated,
	"InvalidAuthenticationTokenTenant":    objectstore.ErrUnauthenticated,
	"ExpiredAuthenticationToken":          objectstore.ErrUnauthenticated,
	"AuthorizationFailed":                 objectstore.ErrForbidden,
	"LinkedAuthorizationFailed":           objectstore.ErrForbidden,
	"StorageAccountAlreadyTaken":          objectstore.ErrOwnedByOther,
	"SubscriptionNotFound":                objectstore.ErrInvalidConfig,
	"InvalidSubscriptionId":               objectstore.ErrInvalidConfig,
	"LocationNotAvailableForResourceType": objectstore.ErrInvalidConfig,
	"ResourceGroupNotFound":               objectstore.ErrNotFound,
	"StorageAccountNotFound":              objectstore.ErrNotFound,
	"ImmutabilityPolicyNotFound":          objectstore.ErrNotFound,
	"ManagementPolicyNotFound":            objectstore.ErrNotFound,
	"TooManyRequests":                     objectstore.ErrThrottled,
	"StorageAccountCountLimitExceeded":    objectstore.ErrQuotaExceeded,
	"ResourceGroupQuotaExceeded":          objectstore.ErrQuotaExceeded,
}

// statusClasses classifies errors without a known code (HEAD responses have no body).
var statusClasses = map[int]error{
	http.StatusNotFound:           objectstore.ErrNotFound,
	http.StatusForbidden:          objectstore.ErrForbidden,
	http.StatusTooManyRequests:    objectstore.ErrThrottled,
	http.StatusServiceUnavailable: objectstore.ErrThrottled,
	http.StatusNotImplemented:     objectstore.ErrUnsupported,
}

func classify(err error) error { return objectstore.Classify(err, classOf) }

func classOf(err error) error {
	// Microsoft Entra ID refused the service principal's secret or the workload identity's token.
	var af *azidentity.AuthenticationFailedError
	if errors.As(err, &af) {
		return objectstore.ErrUnauthenticated
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return nil
	}
	if class, ok := codeClasses[re.ErrorCode]; ok {
		return class
	}
	return statusClasses[re.StatusCode]
}

// errorCode returns the Azure Storage error code of err ("" for others).
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}
