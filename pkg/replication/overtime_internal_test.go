// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestStepGate: the Guard is asked exactly where a streamed object could commit past the pass's
// deadline: read to its end after the deadline, or still writing at the deadline after it was
// read to its end, and again and again while it is read in overtime (where an allowing look
// keeps it in overtime). Nothing else asks, and a decided object stays decided.
func TestStepGate(t *testing.T) {
	for _, c := range []struct {
		s    gateState
		e    gateEvent
		next gateState
		ask  bool
	}{
		{gateReading, gateEnd, gateEnded, false},
		{gateReading, gateDeadline, gateOvertime, false},
		{gateOvertime, gateEnd, gateAllowed, true},
		{gateEnded, gateDeadline, gateAllowed, true},
		{gateOvertime, gateRecheck, gateOvertime, true}, // allowed, the write goes on
		{gateReading, gateRecheck, gateReading, false},
		{gateEnded, gateRecheck, gateEnded, false},
		{gateAllowed, gateRecheck, gateAllowed, false},
		{gateRefused, gateRecheck, gateRefused, false},
		{gateEnded, gateEnd, gateEnded, false}, // a second read past the end
		{gateAllowed, gateEnd, gateAllowed, false},
		{gateAllowed, gateDeadline, gateAllowed, false},
		{gateRefused, gateEnd, gateRefused, false},
		{gateRefused, gateDeadline, gateRefused, false},
	} {
		if next, ask := stepGate(c.s, c.e); next != c.next || ask != c.ask {
			t.Errorf("stepGate(%d, %d) = %d, %t; want %d, %t", c.s, c.e, next, ask, c.next, c.ask)
		}
	}
}

// TestASourceEndingPastTheDeadlineByTheClockIsLookedAt: the source's end read after the deadline
// passed by the clock, before the deadline's AfterFunc ran, is an end past the deadline: the
// Guard is asked (here refusing), and the deadline is seen once.
func TestASourceEndingPastTheDeadlineByTheClockIsLookedAt(t *testing.T) {
	start, cancelStart := context.WithCancel(context.Background())
	cancelStart() // the deadline has passed; no AfterFunc is registered (it has not run yet)
	asked, overtime := 0, 0
	refused := errors.New("the entry is being deleted")
	_, cancel := context.WithCancelCause(context.Background())
	g := &gate{start: start, run: context.Background(), cancel: cancel, opts: Options{
		Deadline: time.Minute,
		Guard:    func(context.Context) error { asked++; return refused },
		Overtime: func(objectstore.ObjectVersion) { overtime++ },
	}}
	body := &gatedBody{r: strings.NewReader("snapshot"), g: g}
	if _, err := io.ReadAll(body); !errors.Is(err, ErrCommitRefused) || !errors.Is(err, refused) {
		t.Errorf("the read past the end got %v; want the Guard's refusal", err)
	}
	if err := g.on(gateDeadline); !errors.Is(err, ErrCommitRefused) || asked != 1 || overtime != 1 {
		t.Errorf("after the late AfterFunc: %v, the Guard asked %d times, Overtime %d times; want the refusal, once, once", err, asked, overtime)
	}
}
