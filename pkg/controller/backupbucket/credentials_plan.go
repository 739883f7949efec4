// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// The steps a plan of the credential lifecycle is made of (decide writes them,
// execution.run carries them out), each with a short form for the table test.

// A step of a plan. Each is one of the types below.
type step interface{ String() string }

// revokeStep revokes, with the issuer named issuer built from the operator's current credentials,
// every credential of the bucket that this issuer issued except keep, once each of creds is
// proven to live where that issuer reaches (CheckLocation); then it drops the annotations drop.
type revokeStep struct {
	issuer string
	creds  []recordedCredential
	// keep: these stay valid; keepCurrent adds the credential the secret records as current
	// when the step runs (one issued earlier in the same pass); keepHeld keeps, when the secret
	// holds the operator's copy as the step runs (a retirement copies it in an earlier step of
	// the same pass), what that copy holds as this issuer says, and says so.
	keep        []string
	keepCurrent bool
	keepHeld    bool
	// previous words the event for the previous credential of a rotation.
	previous bool
	drop     []string
}

// issueStep issues a credential with the configured issuer (inUse stays valid), records it with
// the previous one (if any, revoked after revokeAfter) and publishes it in the generated secret;
// clear names annotations dropped with the write. On objectstore.ErrUnsupported a first
// issuance passes the operator's credentials through when the settings allow it.
type issueStep struct {
	reason          string
	inUse           []string
	honour          string
	previous        *recordedCredential
	revokeAfter     time.Time
	clear           []string
	passThroughable bool
}

// copyStep writes a copy of the operator's credentials into the generated secret (retirement),
// recording retireAfter when it is set.
type copyStep struct {
	data        map[string][]byte
	retireAfter string
}

// dropStep drops the annotations keys from the generated secret's record.
type dropStep struct{ keys []string }

// eventStep records an event on the BackupBucket (and logs its message).
type eventStep struct{ eventType, reason, action, message string }

// statusStep sets the GeneratedCredentials condition and status.generatedSecretRef (ref false:
// none). published words the message of a published credential from the secret as written.
type statusStep struct {
	ref       bool
	status    gardencorev1beta1.ConditionStatus
	reason    string
	message   string
	published bool
}

// unreachableStep reports credentials due for revocation that no issuer built from the operator's
// credentials can revoke, and fails the pass (actuator.unreachable).
type unreachableStep struct {
	ids   string
	cause error
}

// refuseRetirementStep refuses a switch-off under a workload identity and fails the pass
// (actuator.refuseRetirement).
type refuseRetirementStep struct{ ids string }

func (s revokeStep) String() string {
	var ids []string
	for _, c := range s.creds {
		ids = append(ids, c.id)
	}
	keep := slices.Clone(s.keep)
	if s.keepCurrent {
		keep = append(keep, "current")
	}
	if s.keepHeld {
		keep = append(keep, "held")
	}
	return fmt.Sprintf("revoke %s by %s keep %v drop %d", strings.Join(ids, ","), s.issuer, keep, len(s.drop))
}

func (s issueStep) String() string {
	prev := ""
	if s.previous != nil {
		prev = fmt.Sprintf(" previous %s of %s until %s", s.previous.id, s.previous.issuer, s.revokeAfter.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("issue (%s) inUse %v%s", s.reason, s.inUse, prev)
}

func (s copyStep) String() string {
	if s.retireAfter == "" {
		return "copy"
	}
	return "copy retire-after " + s.retireAfter
}

func (s dropStep) String() string        { return fmt.Sprintf("drop %d", len(s.keys)) }
func (s eventStep) String() string       { return "event " + s.reason }
func (s unreachableStep) String() string { return "unreachable " + s.ids }
func (s refuseRetirementStep) String() string {
	return "refuse retirement " + s.ids
}

func (s statusStep) String() string { return fmt.Sprintf("status %s/%s", s.status, s.reason) }
