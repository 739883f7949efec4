package aws

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// errorClasses maps S3 (and STS) error codes to the core's sentinels. Codes are typed values of
// the SDK's smithy.APIError, never parsed out of message text.
var errorClasses = map[string]error{
	"InvalidAccessKeyId":       objectstore.ErrUnauthenticated,
	"SignatureDoesNotMatch":    objectstore.ErrUnauthenticated,
	"ExpiredToken":             objectstore.ErrUnauthenticated,
	"InvalidToken":             objectstore.ErrUnauthenticated,
	"InvalidClientTokenId":     objectstore.ErrUnauthenticated,
	"InvalidIdentityToken":     objectstore.ErrUnauthenticated,
	"ExpiredTokenException":    objectstore.ErrUnauthenticated,
	"AccessDenied":             objectstore.ErrForbidden,
	"AllAccessDisabled":        objectstore.ErrForbidden,
	"AccountProblem":           objectstore.ErrForbidden,
	"Forbidden":                objectstore.ErrForbidden,
	"SlowDown":                 objectstore.ErrThrottled,
	"Throttling":               objectstore.ErrThrottled,
	"ThrottlingException":      objectstore.ErrThrottled,
	"RequestLimitExceeded":     objectstore.ErrThrottled,
	"TooManyRequestsException": objectstore.ErrThrottled,
	"ServiceUnavailable":       objectstore.ErrThrottled,
	// MinIO: its read/write quorum errors are answered as SlowDownRead/SlowDownWrite (503),
	// and a server still starting or busy asks to be retried too.
	"SlowDownRead":                       objectstore.ErrThrottled,
	"SlowDownWrite":                      objectstore.ErrThrottled,
	"TooManyRequests":                    objectstore.ErrThrottled,
	"ServerBusy":                         objectstore.ErrThrottled,
	"XMinioServerNotInitialized":         objectstore.ErrThrottled,
	"RequestTimeout":                     objectstore.ErrThrottled,
	"BucketAlreadyExists":                objectstore.ErrOwnedByOther,
	"NoSuchBucket":                       objectstore.ErrBucketNotFound,
	"NoSuchKey":                          objectstore.ErrNotFound,
	"NoSuchVersion":                      objectstore.ErrNotFound,
	"NotFound":                           objectstore.ErrNotFound,
	"BucketNotEmpty":                     objectstore.ErrBucketNotEmpty,
	"NotImplemented":                     objectstore.ErrUnsupported,
	"TooManyBuckets":                     objectstore.ErrQuotaExceeded,
	"InvalidBucketName":                  objectstore.ErrInvalidConfig,
	"InvalidArgument":                    objectstore.ErrInvalidConfig,
	"InvalidRequest":                     objectstore.ErrInvalidConfig,
	"MalformedXML":                       objectstore.ErrInvalidConfig,
	"MalformedPolicy":                    objectstore.ErrInvalidConfig,
	"InvalidLocationConstraint":          objectstore.ErrInvalidConfig,
	"IllegalLocationConstraintException": objectstore.ErrInvalidConfig,
	"AuthorizationHeaderMalformed":       objectstore.ErrInvalidConfig,
	"InvalidBucketState":                 objectstore.ErrInvalidConfig,
	"KMS.NotFoundException":              objectstore.ErrInvalidConfig,
	"KMS.DisabledException":              objectstore.ErrInvalidConfig,
}

// classify wraps err with the sentinel of its class; unknown errors are returned as they are.
func classify(err error) error { return objectstore.Classify(err, classOf) }

func classOf(err error) error {
	var quota ratelimit.QuotaExceededError
	if errors.As(err, &quota) {
		return objectstore.ErrThrottled
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if class, ok := errorClasses[apiErr.ErrorCode()]; ok {
			return class
		}
	}
	// Errors without a code (HEAD responses have no body) are classified by their status alone.
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return objectstore.ClassOfStatus(respErr.HTTPStatusCode(), nil)
	}
	return nil
}

// classifyCode classifies a per-object error code of a DeleteObjects response.
func classifyCode(code, message string) error {
	err := fmt.Errorf("%s: %s", code, message)
	switch code {
	case "InternalError":
		// Retriable per S3's documentation; the engine retries it like throttling.
		return fmt.Errorf("%w: %w", objectstore.ErrThrottled, err)
	}
	if class, ok := errorClasses[code]; ok {
		return fmt.Errorf("%w: %w", class, err)
	}
	return err
}

func statusCode(err error) int {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.HTTPStatusCode()
	}
	return 0
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
