// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Sentinel errors. Stores wrap them (fmt.Errorf("...: %w: %w", ErrThrottled, sdkErr)) so that the
// controllers classify failures with errors.Is (package lasterror turns them into what gardener
// records: lasterror.For, lasterror.Codes).
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrBucketNotFound: the bucket does not exist.
	ErrBucketNotFound = errors.New("bucket not found")
	// ErrBucketNotEmpty: the bucket still holds objects.
	ErrBucketNotEmpty = errors.New("bucket not empty")
	// ErrOwnedByOther: the bucket name is taken by another account or project.
	ErrOwnedByOther = errors.New("bucket name is owned by someone else")
	// ErrUnauthenticated: the credentials are wrong, expired or unknown.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the credentials are valid but lack a permission.
	ErrForbidden = errors.New("forbidden")
	// ErrThrottled: the store asked us to slow down; retrying later will work.
	ErrThrottled = errors.New("throttled")
	// ErrInvalidConfig: the providerConfig, the credentials' content or the request is invalid;
	// retrying without a change will not help.
	ErrInvalidConfig = errors.New("invalid configuration")
	// ErrUnsupported: the store does not implement a requested setting or operation.
	ErrUnsupported = errors.New("not supported by this object store")
	// ErrQuotaExceeded: an account limit (for example the number of buckets) is reached.
	ErrQuotaExceeded = errors.New("quota exceeded")
	// ErrObjectLocked: an object version is held by a retention lock or legal hold.
	ErrObjectLocked = errors.New("object is locked")
	// ErrKeyRefused: the store refused the customer-provided encryption key (S3's SSE-C) of a
	// request for an object's content: the wrong key, none for an object written with one, or
	// one for an object written without. Whoever reads with the same secret (etcd-backup-restore
	// restoring) is refused alike; retrying without a change will not help.
	ErrKeyRefused = errors.New("the store refused the customer-provided encryption key")
	// ErrUnreachable: the store could not be reached at all (connection refused, reset or
	// dropped, a name that does not resolve); retried, as the store may come back.
	ErrUnreachable = errors.New("object store unreachable")
)

// InvalidError is a configuration error whose message says what is wrong, naming the field path
// or the secret key first ("<field path or key>: <what is wrong>"), without the sentinel's words.
// It matches ErrInvalidConfig.
type InvalidError struct{ err error }

// Invalidf formats an InvalidError; %w wraps as with fmt.Errorf.
func Invalidf(format string, args ...any) error {
	return &InvalidError{err: fmt.Errorf(format, args...)}
}

func (e *InvalidError) Error() string { return e.err.Error() }

// Unwrap returns what the message wraps.
func (e *InvalidError) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidConfig }

// HandBackWaitError reports a hand-back (providerConfig handBack) that the store cannot complete
// yet: the bucket holds something the provider extension taking it back would never delete or
// find (generations only this extension's rule deletes, object versions its deletion cannot
// remove, an account it would not look for). EnsureBucket returns it once every other setting is
// converged. It is no configuration error and matches no sentinel: the BackupBucket's reconcile
// succeeds meanwhile (gardenlet syncs the secrets a hand-back waits for only while it does),
// condition HandBack says what it waits for, and every look tries again, so the hand-back
// finishes by itself once the cause is gone. Every provider reports such a wait with this type.
type HandBackWaitError struct {
	// Bucket is the bucket's name.
	Bucket string
	// Why says what is left and what removes it, as the operator reads it.
	Why string
	// ByOperator says that only the operator removes the cause (a change of the configuration or
	// of the store by hand); otherwise it goes by itself (a retention that ends, a rule that runs).
	ByOperator bool
}

func (e *HandBackWaitError) Error() string {
	return fmt.Sprintf("providerConfig.handBack: bucket %q cannot be handed back yet: %s", e.Bucket, e.Why)
}

// RetryAfterError carries the delay a throttling store asked for. It matches ErrThrottled.
type RetryAfterError struct {
	After time.Duration
	Cause error
}

func (e *RetryAfterError) Error() string {
	return "throttled, retry after " + e.After.String() + ": " + e.Cause.Error()
}

// Is makes errors.Is(err, ErrThrottled) true.
func (e *RetryAfterError) Is(target error) bool { return target == ErrThrottled }

// Unwrap returns the cause.
func (e *RetryAfterError) Unwrap() error { return e.Cause }

// RuleMissingError reports a bucket whose deferral rule (the lifecycle rule that deletes what a
// deferral marks, objectstore.Management's DeferDeletion) is not in place and that the
// credentials in use may not put there: an entry's generated credentials may mark objects, not
// write the bucket's lifecycle. The BackupBucket's reconcile, with the operator's credentials,
// puts it there. It matches ErrForbidden.
type RuleMissingError struct {
	Bucket string
	// Why says what is wrong with the rule, e.g. `lifecycle rule R: it is missing`.
	Why   string
	Cause error
}

func (e *RuleMissingError) Error() string {
	return fmt.Sprintf("bucket %q: %s, and these credentials may not write the bucket's lifecycle (%v); the rule is put in place by the BackupBucket's reconcile with the operator's credentials: reconcile the BackupBucket %q on its seed (annotation gardener.cloud/operation=reconcile)",
		e.Bucket, e.Why, e.Cause, e.Bucket)
}

// Is makes errors.Is(err, ErrForbidden) true.
func (e *RuleMissingError) Is(target error) bool { return target == ErrForbidden }

// Unwrap returns the store's answer to the write.
func (e *RuleMissingError) Unwrap() error { return e.Cause }

// Classify wraps err with the sentinel classOf finds for it, so that callers match with
// errors.Is and still see (and log) the store's own error; a failure to reach the store that
// classOf does not know is ErrUnreachable; any other error, and nil, are returned as they are.
func Classify(err error, classOf func(error) error) error {
	if err == nil {
		return nil
	}
	if class := classOf(err); class != nil {
		return fmt.Errorf("%w: %w", class, err)
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// unreachable says whether err is a failure to reach the store at all: a connection refused,
// reset or closed before the response, or a name that does not resolve. A cancelled or expired
// context is the caller's (a deletion's cut-off), and a TLS verification failure a configuration
// problem, not that.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// statusClasses are the classes of the HTTP statuses every store means alike.
var statusClasses = map[int]error{
	http.StatusForbidden:          ErrForbidden,
	http.StatusNotFound:           ErrNotFound,
	http.StatusTooManyRequests:    ErrThrottled,
	http.StatusServiceUnavailable: ErrThrottled,
	http.StatusNotImplemented:     ErrUnsupported,
}

// ClassOfStatus is the sentinel of an HTTP status, for the errors that carry nothing more
// telling (a HEAD response has no body, so no error code): the store's own classes first (own,
// which may be nil: the statuses its API means in its own way), then those every store means
// alike. It is nil for a status of no class.
func ClassOfStatus(code int, own map[int]error) error {
	if class, ok := own[code]; ok {
		return class
	}
	return statusClasses[code]
}
