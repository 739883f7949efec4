// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"errors"
	"fmt"
)

// Reason says why an etcd's newest backup is not restorable. The values are the CamelCase reasons
// the BackupsRestorable condition will carry (one reason per failure kind).
type Reason string

const (
	// ReasonHashMismatch means an object's content does not match the SHA-256 appended to it (a byte
	// changed after etcd or etcd-backup-restore computed the hash).
	ReasonHashMismatch Reason = "HashMismatch"
	// ReasonChainBroken means the full snapshot and its deltas do not form one unbroken revision range
	// (a gap, an overlap from a second writer, a delta before its full), by names or by content.
	ReasonChainBroken Reason = "ChainBroken"
	// ReasonUndecodable means an object cannot be read as its name says (empty, truncated, not in the
	// compression its suffix names, no hash where one belongs, not JSON events).
	ReasonUndecodable Reason = "Undecodable"
	// ReasonRestoreFailed means etcd's own restore or the embedded etcd refused the verified data.
	ReasonRestoreFailed Reason = "RestoreFailed"
	// ReasonNoFullSnapshot means deltas without a full snapshot to apply them to.
	ReasonNoFullSnapshot Reason = "NoFullSnapshot"
	// ReasonKeyRefused means the store refused the customer-provided encryption key (S3's SSE-C) the
	// entry's secret gives for a snapshot: the wrong key, none for a snapshot written with one, or
	// one for a snapshot written without. etcd-backup-restore, given the same secret, cannot
	// restore it either; the snapshot itself may be intact.
	ReasonKeyRefused Reason = "KeyRefused"
	// ReasonTooLarge means the chain does not fit the drill's budget (bytes to read or scratch space);
	// nothing is proven either way, so callers report it as Unknown, never as restorable.
	ReasonTooLarge Reason = "TooLarge"
	// ReasonCutOff means the drill was stopped before it proved anything: its deadline passed, or
	// the listing held more keys than its cap. Nothing is proven either way (callers report it as
	// Unknown, never as restorable), and the store did not fail.
	ReasonCutOff Reason = "CutOff"
)

// Sentinels, one per Reason, for errors.Is.
var (
	ErrHashMismatch   = errors.New("hash mismatch")
	ErrChainBroken    = errors.New("snapshot chain broken")
	ErrUndecodable    = errors.New("snapshot undecodable")
	ErrRestoreFailed  = errors.New("restore failed")
	ErrNoFullSnapshot = errors.New("no full snapshot")
	ErrTooLarge       = errors.New("chain exceeds the drill budget")
	ErrKeyRefused     = errors.New("customer-provided key refused")
	ErrCutOff         = errors.New("drill cut off")
)

var sentinels = map[Reason]error{
	ReasonHashMismatch:   ErrHashMismatch,
	ReasonChainBroken:    ErrChainBroken,
	ReasonUndecodable:    ErrUndecodable,
	ReasonRestoreFailed:  ErrRestoreFailed,
	ReasonNoFullSnapshot: ErrNoFullSnapshot,
	ReasonTooLarge:       ErrTooLarge,
	ReasonKeyRefused:     ErrKeyRefused,
	ReasonCutOff:         ErrCutOff,
}

// Error is a drill's finding about the backup itself: the store answered, and what it holds is
// not restorable (or, for ReasonTooLarge and ReasonCutOff, not drillable within the budget). Errors of the store
// (throttled, unreachable, forbidden, an object gone since the listing) are never wrapped in an
// Error: they say nothing about the backup, and a caller retries the drill later. A refused
// customer key (objectstore.ErrKeyRefused) is the exception, ReasonKeyRefused: it says that the
// backup cannot be restored with the entry's secret, which is what etcd-backup-restore gets.
type Error struct {
	Reason Reason
	// Key is the object the finding is about; empty when it is about the chain as a whole.
	Key string
	// Detail says what is wrong, for a condition message (never object content or a secret).
	Detail string
	// Err is the underlying cause, if any (a decompressor's or etcd's error).
	Err error
}

func newError(reason Reason, key string, err error, format string, args ...any) *Error {
	return &Error{Reason: reason, Key: key, Detail: fmt.Sprintf(format, args...), Err: err}
}

func (e *Error) Error() string {
	s := string(e.Reason) + ": "
	if e.Key != "" {
		s += e.Key + ": "
	}
	s += e.Detail
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrHashMismatch) (and the other sentinels) true for an Error of that
// reason.
func (e *Error) Is(target error) bool { return sentinels[e.Reason] == target }

// ReasonOf returns the Reason of the first *Error in err's chain, "" when there is none (err is
// nil, or a failure of the store or the drill's machinery rather than a finding).
func ReasonOf(err error) Reason {
	var de *Error
	if errors.As(err, &de) {
		return de.Reason
	}
	return ""
}
