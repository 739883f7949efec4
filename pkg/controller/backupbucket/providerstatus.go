// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"encoding/json"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
)

// ProviderStatus is what the extension publishes in a BackupBucket's status.providerStatus. Its
// parts are written by the BackupBucket's reconcile (recordCopy); other writers keep what they
// do not know (MergeProviderStatus).
type ProviderStatus struct {
	metav1.TypeMeta `json:",inline"`

	// Copy is the copy bucket the reconcile last converged (CopyBucketReady True) and `copy:`
	// still names. When `copy:` names another place or none, it moves to FormerCopies.
	Copy *CopyLocation `json:"copy,omitempty"`
	// CopySecretVersion is the resourceVersion of the declared copy's credentials secret
	// (garden/ref-<credentialsRef>) the last reconcile read before converging the copy, "" when
	// it was missing; nil when no copy was declared. The copy-secret watch asks for a reconcile
	// when the secret's differs (copySecretDue).
	CopySecretVersion *string `json:"copySecretVersion,omitempty"`
	// FormerCopies are copy buckets the extension converged that `copy:` no longer names: they
	// may hold snapshots, the operator's to delete. Each is reported (FormerCopyBucketsEmpty)
	// until a reconcile finds it empty or gone, or its credentials secret gone (reported once),
	// or `copy:` names it again; they go with the BackupBucket.
	FormerCopies []CopyLocation `json:"formerCopies,omitempty"`
	// Failover is the record of an automatic failover (copy.failover; decideFailover): while it
	// is set every entry is served from the copy. The probe writes and removes it.
	Failover *connect.FailoverRecord `json:"failover,omitempty"`
}

// CopyLocation is the place of a copy bucket: its name, region, the Seed's spec.resources
// name of its credentials (garden/ref-<credentialsRef>) and its store type. Two places differ
// when any field does.
type CopyLocation struct {
	Bucket         string `json:"bucket"`
	Region         string `json:"region,omitempty"`
	CredentialsRef string `json:"credentialsRef"`
	// Type is the copy store's type (copy.type); empty: the primary's (as in records written
	// before the type was recorded).
	Type string `json:"type,omitempty"`
}

// ProviderStatusAPIVersion and ProviderStatusKind identify ProviderStatus.
const (
	ProviderStatusAPIVersion = "backup.extensions.gardener.cloud/v1alpha1"
	ProviderStatusKind       = "BackupBucketStatus"
)

// ReadProviderStatus decodes a bucket's status.providerStatus (empty when there is none).
func ReadProviderStatus(bb *extensionsv1alpha1.BackupBucket) (ProviderStatus, error) {
	var ps ProviderStatus
	if bb.Status.ProviderStatus == nil || len(bb.Status.ProviderStatus.Raw) == 0 {
		return ps, nil
	}
	err := json.Unmarshal(bb.Status.ProviderStatus.Raw, &ps)
	return ps, err
}

// MergeProviderStatus changes bb's status.providerStatus by set and keeps the fields set does
// not touch, whichever writer added them (they are kept as raw JSON). A status left empty
// removes providerStatus. It reports whether anything changed. A providerStatus whose fields of
// ours do not decode is an error and is left as it is: starting from an empty status would drop
// what it records (a failover record, former copies).
func MergeProviderStatus(bb *extensionsv1alpha1.BackupBucket, set func(*ProviderStatus)) (bool, error) {
	var before []byte
	others := map[string]json.RawMessage{}
	if bb.Status.ProviderStatus != nil {
		before = bb.Status.ProviderStatus.Raw
		_ = json.Unmarshal(before, &others) // not ours or unreadable: replaced
	}
	ps, err := ReadProviderStatus(bb)
	if err != nil {
		return false, fmt.Errorf("reading the providerStatus of BackupBucket %s: %w", bb.Name, err)
	}
	set(&ps)
	ps.TypeMeta = metav1.TypeMeta{}
	ours, err := json.Marshal(ps)
	if err != nil { // plain structs of strings: not reached
		panic(err)
	}
	for _, k := range []string{"apiVersion", "kind", "copy", "copySecretVersion", "formerCopies", "failover"} {
		delete(others, k)
	}
	if err := json.Unmarshal(ours, &others); err != nil {
		panic(err)
	}
	var raw []byte
	if len(others) > 0 {
		others["apiVersion"], _ = json.Marshal(ProviderStatusAPIVersion)
		others["kind"], _ = json.Marshal(ProviderStatusKind)
		raw, _ = json.Marshal(others) // map keys sorted: the same status, the same bytes
	}
	if string(raw) == string(before) {
		return false, nil
	}
	if raw == nil {
		bb.Status.ProviderStatus = nil
	} else {
		bb.Status.ProviderStatus = &runtime.RawExtension{Raw: raw}
	}
	return true, nil
}
