// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassifyAttempt(t *testing.T) {
	for _, c := range []struct {
		err  error
		want attempt
	}{
		{nil, attemptCopied},
		{fmt.Errorf("copying: %w: AccessDenied", objectstore.ErrForbidden), attemptRefused},
		{objectstore.ErrUnauthenticated, attemptRefused},
		{fmt.Errorf("copying: %w", objectstore.ErrBucketNotFound), attemptRefused},
		{objectstore.ErrUnsupported, attemptRefused},
		{objectstore.Invalidf("region: AuthorizationHeaderMalformed"), attemptRefused},
		{objectstore.ErrKeyRefused, attemptRefused},
		{fmt.Errorf("%w: %w", errVanished, objectstore.ErrNotFound), attemptUnsure},
		{fmt.Errorf("copying: %w", objectstore.ErrPreconditionFailed), attemptUnsure},
		{objectstore.ErrThrottled, attemptFailed},
		{objectstore.ErrUnreachable, attemptFailed},
		{context.DeadlineExceeded, attemptFailed},
		{errors.New("something else"), attemptFailed},
	} {
		if got := classifyAttempt(c.err); got != c.want {
			t.Errorf("classifyAttempt(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

func TestClassifyStream(t *testing.T) {
	for _, c := range []struct {
		err  error
		want streamed
	}{
		{nil, streamWrote},
		{errVanished, streamAlike},
		{fmt.Errorf("writing to the destination: %w", objectstore.ErrPreconditionFailed), streamAlike},
		{fmt.Errorf("writing to the destination: %w", objectstore.ErrForbidden), streamFailed},
		{objectstore.ErrThrottled, streamFailed},
	} {
		if got := classifyStream(c.err); got != c.want {
			t.Errorf("classifyStream(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

// TestDecideMode is the whole table of how a pass continues after one object was tried
// server-side (and streamed where the attempt says so).
func TestDecideMode(t *testing.T) {
	for _, c := range []struct {
		name    string
		a       attempt
		s       streamed
		streams bool
		want    mode
	}{
		{"copied inside the store: the rest too", attemptCopied, notStreamed, false, modeServer},
		{"refused, streamed: the rest streamed", attemptRefused, streamWrote, true, modeStream},
		{"refused, the stream failed too: still streamed", attemptRefused, streamFailed, true, modeStream},
		{"refused, the stream found it gone: still streamed", attemptRefused, streamAlike, true, modeStream},
		{"not found inside, the stream wrote it: another store, the rest streamed", attemptUnsure, streamWrote, true, modeStream},
		{"not found inside nor by the stream: gone, the next is tried", attemptUnsure, streamAlike, true, modeUndecided},
		{"unsure, the stream failed otherwise: nothing known, the next is tried", attemptUnsure, streamFailed, true, modeUndecided},
		{"failed otherwise (throttled): not streamed, the next is tried", attemptFailed, notStreamed, false, modeUndecided},
	} {
		if got := streamsAfter(c.a); got != c.streams {
			t.Errorf("%s: streamsAfter = %v; want %v", c.name, got, c.streams)
		}
		if got := decideMode(c.a, c.s); got != c.want {
			t.Errorf("%s: decideMode = %d; want %d", c.name, got, c.want)
		}
	}
}

func TestStreamsForGuard(t *testing.T) {
	for _, c := range []struct {
		name                          string
		insideDeclined, streamGuarded bool
		want                          bool
	}{
		{"both guard: copied inside", false, true, false},
		{"only the stream guards (openstack, a missing key): streamed", true, true, true},
		{"neither guards (openstack, an older key): copied inside, unguarded either way", true, false, false},
		{"only the copy inside guards: copied inside", false, false, false},
	} {
		if got := streamsForGuard(c.insideDeclined, c.streamGuarded); got != c.want {
			t.Errorf("%s: streamsForGuard = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestWayOf(t *testing.T) {
	const threshold = 100
	for _, c := range []struct {
		m        mode
		size     int64
		forGuard bool
		want     way
	}{
		{modeUndecided, threshold - 1, false, wayStream},
		{modeUndecided, threshold - 1, true, wayStream},
		{modeUndecided, threshold, false, wayTry},
		{modeUndecided, threshold, true, wayTry},
		{modeServer, threshold - 1, false, wayStream},
		{modeServer, threshold, false, wayServer},
		{modeServer, threshold, true, wayStream},
		{modeStream, threshold - 1, false, wayStream},
		{modeStream, threshold, false, wayStream},
		{modeStream, threshold, true, wayStream},
	} {
		if got := wayOf(c.m, c.size, threshold, c.forGuard); got != c.want {
			t.Errorf("wayOf(mode %d, size %d, forGuard %t) = %d; want %d", c.m, c.size, c.forGuard, got, c.want)
		}
	}
	if got := wayOf(modeUndecided, 0, 0, false); got != wayTry {
		t.Errorf("no threshold: an empty object is %d; want tried", got)
	}
}

func TestServerSideMin(t *testing.T) {
	for _, c := range []struct{ set, want int64 }{{0, DefaultServerSideMinBytes}, {-1, 0}, {1 << 20, 1 << 20}} {
		if got := serverSideMin(Options{ServerSideMinBytes: c.set}); got != c.want {
			t.Errorf("ServerSideMinBytes %d: threshold %d; want %d", c.set, got, c.want)
		}
	}
}
