// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"errors"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// How a pass copies, when the destination offers a server-side copy (To.Copier): whether the
// destination's credentials can copy from the source inside the store is known only by trying
// (the source may be in another endpoint or account, or the operator may not have granted the
// destination's principal read on the source bucket). The pass tries the first object alone
// and decides from its outcome (decideMode) how the rest of the pass copies: inside the store,
// or streamed through this process. Nothing is remembered across passes: each pass tries again,
// so that a grant given or taken back is followed by the next pass.

// mode is how a pass copies its next objects.
type mode int

const (
	// modeUndecided: the next object is tried server-side, alone.
	modeUndecided mode = iota
	// modeServer: every object is copied inside the store (a server-side copy worked).
	modeServer
	// modeStream: every object is streamed (no Copier, or the store refused a server-side copy).
	modeStream
)

// attempt is the outcome of one server-side copy, as the mode decision reads it.
type attempt int

const (
	// attemptCopied: the object was copied inside the store.
	attemptCopied attempt = iota
	// attemptRefused: the store refused to copy from the source with the destination's
	// credentials: not allowed to read it (forbidden, unauthenticated, the customer key of the
	// source refused), no such source bucket at the destination's endpoint, or no such copy.
	// The object is streamed instead.
	attemptRefused
	// attemptUnsure: the source object was not found, or a condition failed: the object may
	// have vanished or changed, or the destination's endpoint may hold another bucket of the
	// source's name. The object is streamed instead; the stream tells which.
	attemptUnsure
	// attemptFailed: any other failure (throttled, unreachable, cancelled): the object's, which
	// says nothing about server-side copies. Not streamed; the next object is tried.
	attemptFailed
)

// classifyAttempt classifies a server-side copy's error by the store's sentinels.
func classifyAttempt(err error) attempt {
	switch {
	case err == nil:
		return attemptCopied
	case errors.Is(err, objectstore.ErrForbidden), errors.Is(err, objectstore.ErrUnauthenticated),
		errors.Is(err, objectstore.ErrBucketNotFound), errors.Is(err, objectstore.ErrUnsupported),
		errors.Is(err, objectstore.ErrInvalidConfig), errors.Is(err, objectstore.ErrKeyRefused):
		return attemptRefused
	case errors.Is(err, objectstore.ErrNotFound), errors.Is(err, objectstore.ErrPreconditionFailed):
		return attemptUnsure
	}
	return attemptFailed
}

// streamed is how the stream of an object tried server-side first ended.
type streamed int

const (
	// notStreamed: the object was not streamed (copied server-side, or failed otherwise).
	notStreamed streamed = iota
	// streamWrote: the stream wrote the object to the destination.
	streamWrote
	// streamAlike: the stream found what the server-side copy found: the source object gone,
	// or the destination's key changed (a conditional write refused).
	streamAlike
	// streamFailed: the stream failed otherwise.
	streamFailed
)

// streamsAfter says whether an object whose server-side copy ended as a is streamed.
func streamsAfter(a attempt) bool { return a == attemptRefused || a == attemptUnsure }

// classifyStream classifies the error of a stream that followed a server-side attempt.
func classifyStream(err error) streamed {
	switch {
	case err == nil:
		return streamWrote
	case errors.Is(err, errVanished), errors.Is(err, objectstore.ErrPreconditionFailed):
		return streamAlike
	}
	return streamFailed
}

// decideMode is how the rest of a pass copies after its next object was tried server-side (a)
// and, where it was streamed after (streamsAfter), how the stream ended (s). Pure; table-tested.
//
//   - copied inside the store: every further object is (modeServer);
//   - refused: every further object is streamed (modeStream);
//   - unsure, and the stream wrote the object: the server-side copy could not see what the
//     stream read, so every further object is streamed;
//   - unsure, and the stream found the same (gone, or changed): the object was the cause; the
//     next object is tried (modeUndecided);
//   - anything else: nothing is known; the next object is tried.
func decideMode(a attempt, s streamed) mode {
	switch {
	case a == attemptCopied:
		return modeServer
	case a == attemptRefused:
		return modeStream
	case a == attemptUnsure && s == streamWrote:
		return modeStream
	}
	return modeUndecided
}

// streamsForGuard reports whether an object is streamed although the store may copy it inside:
// the store's copy inside declares it cannot guard the object's precondition (insideDeclined:
// Swift applies a copy's conditions to its source) while the stream's write can (streamGuarded),
// so that a key someone else wrote since the listing is never overwritten. Pure; table-tested.
func streamsForGuard(insideDeclined, streamGuarded bool) bool { return insideDeclined && streamGuarded }
