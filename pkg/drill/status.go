package drill

import (
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
	// Error is why the drill as a whole failed (the listing), with nothing proven; empty otherwise.
	Error string `json:"error,omitempty"`
	// Etcds is each etcd's outcome, by name.
	Etcds []EtcdStatus `json:"etcds,omitempty"`
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
}
