// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"errors"
	"fmt"
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

func classify(err error) error { return objectstore.Classify(err, classOf) }

func classOf(err error) error {
	// Microsoft Entra ID refused the service principal's secret or the workload identity's token.
	// Without a response it was not reached (its TLS certificate not trusted, the network): that
	// is no refusal, and stays unclassified.
	var af *azidentity.AuthenticationFailedError
	if errors.As(err, &af) {
		if af.RawResponse == nil {
			return nil
		}
		return objectstore.ErrUnauthenticated
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return nil
	}
	if class, ok := codeClasses[re.ErrorCode]; ok {
		return class
	}
	// Errors without a known code (HEAD responses have no body) are classified by their status.
	return objectstore.ClassOfStatus(re.StatusCode, nil)
}

// errorCode returns the Azure Storage error code of err ("" for others).
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// briefError is an SDK error told in one line: the request, the status and the service's error
// code instead of azcore's multi-line dump of the response (status, code and the whole XML or
// JSON body). The error itself stays in the chain for classification.
type briefError struct {
	err error
	msg string
}

func (e *briefError) Error() string { return e.msg }
func (e *briefError) Unwrap() error { return e.err }

// brief is err in one line where it is a response error. A probe's error goes into the
// BucketAvailable condition and its event, whose note the API server refuses beyond 1 kB: the
// dump of one response is most of that, two (operator's and generated credentials) exceed it.
func brief(err error) error {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	msg := fmt.Sprintf("%d %s", re.StatusCode, http.StatusText(re.StatusCode))
	if re.ErrorCode != "" {
		msg += " (" + re.ErrorCode + ")"
	}
	if req := re.RawResponse; req != nil && req.Request != nil {
		u := *req.Request.URL
		u.RawQuery = "" // a SAS token is in the query
		msg = req.Request.Method + " " + u.String() + ": " + msg
	}
	return &briefError{err: err, msg: msg}
}

// isNotFound is true for a management-plane 404 of any resource.
func isNotFound(err error) bool {
	c := classify(err)
	return errors.Is(c, objectstore.ErrNotFound) || errors.Is(c, objectstore.ErrBucketNotFound)
}

// classify classifies an error of the data plane; a refused account key is named by the
// secret's keys (never by its value) when the key came from the secret.
func (s *store) classify(err error) error {
	c := classify(err)
	if s.secretKeys != "" && (errors.Is(c, objectstore.ErrUnauthenticated) || errors.Is(c, objectstore.ErrForbidden)) {
		return fmt.Errorf("the storage account refused the secret's %s: %w", s.secretKeys, c)
	}
	return c
}
