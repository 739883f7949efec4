// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import "testing"

// TestStepGate: the Guard is asked exactly where a streamed object could commit past the pass's
// deadline: read to its end after the deadline, or still writing at the deadline after it was
// read to its end. Nothing else asks, and a decided object stays decided.
func TestStepGate(t *testing.T) {
	for _, c := range []struct {
		s    gateState
		e    gateEvent
		next gateState
		ask  bool
	}{
		{gateReading, gateEnd, gateEnded, false},
		{gateReading, gateDeadline, gateOvertime, false},
		{gateOvertime, gateEnd, gateOvertime, true},
		{gateEnded, gateDeadline, gateEnded, true},
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
