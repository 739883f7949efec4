// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/minio/madmin-go/v3"

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

// regionHeader is S3's answer to a request in the wrong region: the region the bucket (or, for a
// single-region store such as MinIO, the store) is in. HEAD answers carry no body, so no code: the
// header is what tells a region mismatch from other bad requests.
const regionHeader = "X-Amz-Bucket-Region"

// regionSource says where the store's region comes from, for the messages.
func (s *store) regionSource() string {
	if s.regionOverride != "" {
		return fmt.Sprintf("the secret key %q", KeyRegion)
	}
	return "spec.region"
}

// regionMismatch recognises an answer that names another region than the client's (S3: 301, 307
// or 400 with X-Amz-Bucket-Region; MinIO: 400 with it) and says so with both regions; nil
// otherwise.
func (s *store) regionMismatch(bucket string, err error) error {
	var respErr *awshttp.ResponseError
	if !errors.As(err, &respErr) || respErr.Response == nil {
		return nil
	}
	switch respErr.HTTPStatusCode() {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusBadRequest:
		// Not 403: S3 names the region of a bucket we may not read too, and that bucket may be
		// someone else's; the create call that follows a 403 says which.
	default:
		return nil
	}
	theirs, ours := respErr.Response.Header.Get(regionHeader), s.client.Options().Region
	if theirs == "" || theirs == ours {
		return nil
	}
	return s.wrongRegion(bucket, theirs, err)
}

// wrongRegion names both regions and what to change; cause is the store's answer, if any.
func (s *store) wrongRegion(bucket, theirs string, cause error) error {
	ours := s.client.Options().Region
	err := fmt.Errorf("%w: the store answers that bucket %q is in region %q, not in %q as %s says; set %s to %q",
		objectstore.ErrInvalidConfig, bucket, theirs, ours, s.regionSource(), s.regionSource(), theirs)
	if cause != nil {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// bucketError classifies an error of a request on bucket: a region mismatch first (whatever the
// code), then by the SDK's code or status; refused credentials name the secret keys they came from.
func (s *store) bucketError(bucket string, err error) error {
	if err == nil {
		return nil
	}
	if mismatch := s.regionMismatch(bucket, err); mismatch != nil {
		return mismatch
	}
	err = classify(err)
	if errors.Is(err, objectstore.ErrBucketNotFound) {
		return fmt.Errorf("bucket %q does not exist: %w", bucket, err)
	}
	if errors.Is(err, objectstore.ErrUnauthenticated) && s.credentialKeys != "" {
		return fmt.Errorf("bucket %q: the store refused the credentials of the secret keys %s: %w", bucket, s.credentialKeys, err)
	}
	return err
}

// readError classifies an error of a request for one object's content (GetObject). S3 answers
// customer-key parameters that do not fit the object with codes it gives other causes too, so
// the answer is read with what the request sent: 400 when the object was written with a customer
// key and the request sent none, or sent one for an object written without (SSE-S3 or none), or a
// key whose MD5 does not match; 403 when the key is not the object's (MinIO answers
// crypto.ErrSecretKeyMismatch with AccessDenied, cmd/api-errors.go:2245; S3 with 403 too). A 403
// is told from a missing permission by asking for the object's metadata without the key: an
// object written with a customer key refuses that with 400. Such refusals are
// objectstore.ErrKeyRefused (etcd-backup-restore, sending the same key, is refused alike).
func (s *store) readError(ctx context.Context, bucket, key string, err error) error {
	if s.regionMismatch(bucket, err) != nil {
		return s.bucketError(bucket, err)
	}
	var keyRefused bool
	switch statusCode(err) {
	case http.StatusBadRequest:
		keyRefused = s.sse != nil || errorCode(err) == "InvalidRequest"
	case http.StatusForbidden:
		if s.sse != nil {
			_, headErr := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
			keyRefused = statusCode(headErr) == http.StatusBadRequest
		}
	}
	if !keyRefused {
		return s.bucketError(bucket, err)
	}
	if s.sse == nil {
		return fmt.Errorf("%w: %q was written with a customer-provided key (SSE-C) and the secret has no %q and %q: %w",
			objectstore.ErrKeyRefused, key, KeySSECustomerKey, KeySSECustomerAlgorithm, err)
	}
	return fmt.Errorf("%w: the store refused the secret's %q for %q (a key other than the one it was written with, or it was written without one): %w",
		objectstore.ErrKeyRefused, KeySSECustomerKey, key, err)
}

func iamError(what string, err error) error {
	var nse *iamtypes.NoSuchEntityException
	if errors.As(err, &nse) {
		return fmt.Errorf("%s: %w: %w", what, objectstore.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, classify(err))
}

func minioError(what string, err error) error {
	switch madmin.ToErrorResponse(err).Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch":
		return fmt.Errorf("%s: %w: %w", what, objectstore.ErrUnauthenticated, err)
	case "AccessDenied":
		return fmt.Errorf("%s: %w: %w", what, objectstore.ErrForbidden, err)
	case "XMinioAdminNotImplemented", "NotImplemented", "MethodNotAllowed", "NoSuchBucket":
		// No MinIO admin API here: an S3-compatible store of another make reads the admin path
		// as an object in a bucket named "minio".
		return fmt.Errorf("%s: %w: the endpoint does not serve MinIO's admin API, so it cannot issue bucket-scoped users (generatedCredentials.allowPassThrough: true keeps the operator's credentials): %w", what, objectstore.ErrUnsupported, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
