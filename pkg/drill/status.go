// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is a BackupEntry's last restore drill as the extension publishes it in
// status.providerStatus.drill, beside the inventory. It holds names, revisions, counts and
// times, never object content or a secret.
type Status struct {
	// DrilledAt is when the last drill ended.
	DrilledAt metav1.Time `json:"drilledAt"`
	// Bucket and Region are where it drilled (the entry's spec then).
	Bucket string `json:"bucket,omitempty"`
	Region string `json:"region,omitempty"`
	// Prefix is the key prefix it listed (the entry's, backupentry.Locate).
	Prefix string `json:"prefix,omitempty"`
	// Error is why the drill as a whole failed (the listing), with nothing proven; empty otherwise.
	Error string `json:"error,omitempty"`
	// CutOff is why the drill was cut off (its deadline, a cap on the keys listed), empty when it
	// was not: what it had not proven by then is unknown, and the store did not fail. With no
	// Etcds, nothing was drilled.
	CutOff string `json:"cutOff,omitempty"`
	// Interrupted is why the drill ended without a result (its process ended during it: out of
	// memory, most likely), empty when it did not: nothing proven, and the entry is drilled again
	// an interval later.
	Interrupted string `json:"interrupted,omitempty"`
	// Etcds is each etcd's outcome, by name.
	Etcds []EtcdStatus `json:"etcds,omitempty"`
	// ChainsCheckedAt is the ChainCheck whose findings this status reports (nil: none).
	ChainsCheckedAt *metav1.Time `json:"chainsCheckedAt,omitempty"`
}

// EtcdStatus is one etcd's drill.
type EtcdStatus struct {
	// Name is the etcd's directory under the prefix, e.g. "etcd-main".
	Name string `json:"name"`
	// Restorable is "True" (restored), "False" (a finding: Reason says which) or "Unknown"
	// (nothing proven: the budget, the store or the drill's machinery; Reason says which).
	Restorable string `json:"restorable"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	// FullSnapshot is the key of the full snapshot the chain starts at; Deltas how many deltas
	// follow it.
	FullSnapshot string `json:"fullSnapshot,omitempty"`
	Deltas       int    `json:"deltas"`
	// Revision and Keys are what the restored etcd held (restored only).
	Revision int64 `json:"revision,omitempty"`
	Keys     int64 `json:"keys,omitempty"`
	// Size is the chain's listed size; BytesRead what the drill read of it.
	Size      int64 `json:"size"`
	BytesRead int64 `json:"bytesRead"`
	// Duration is how long this etcd's drill took.
	Duration metav1.Duration `json:"duration"`
	// ByNames marks a finding of the cheap check on an inventory's listing (ChainCheck), made
	// without a download, that replaced the last drill's outcome for this etcd.
	ByNames bool `json:"byNames,omitempty"`
}

// ChainCheck is what the cheap check on an inventory's listing (CheckChains, nothing downloaded)
// found, in status.providerStatus.chains: the inventory publishes it when its findings change,
// and the drill's controller reports them at once.
type ChainCheck struct {
	// CheckedAt is the inventory whose listing found these findings first.
	CheckedAt metav1.Time `json:"checkedAt"`
	// Findings are the chains broken by names, one per etcd.
	Findings []ChainFinding `json:"findings,omitempty"`
}

// ChainFinding is one etcd's chain broken by names.
type ChainFinding struct {
	Etcd   string `json:"etcd"`
	Reason Reason `json:"reason"`
	Key    string `json:"key,omitempty"`
	Detail string `json:"detail"`
}

// FindingsOf are the findings of chains (their Err), one per etcd with one.
func FindingsOf(chains []Chain) []ChainFinding {
	var out []ChainFinding
	for _, ch := range chains {
		var de *Error
		if errors.As(ch.Err, &de) {
			out = append(out, ChainFinding{Etcd: ch.Etcd, Reason: de.Reason, Key: de.Key, Detail: de.Detail})
		}
	}
	return out
}
