// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"encoding/json"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
)

// ReasonDeleting is the reason (Unknown) of the conditions the entry's periodic controllers
// write (BackupsFresh, BackupsRestorable) while the entry is being deleted: its backups are no
// longer counted, judged or drilled.
const ReasonDeleting = "Deleting"

// ProviderStatus is what the extension publishes in a BackupEntry's status.providerStatus.
type ProviderStatus struct {
	metav1.TypeMeta `json:",inline"`

	// Inventory is the last count of the entry's prefix.
	Inventory *inventory.Inventory `json:"inventory,omitempty"`
	// Drill is the last restore drill of the entry's backups (pkg/controller/restoredrill).
	Drill *drill.Status `json:"drill,omitempty"`
	// Chains is what the inventory's cheap check of the chains by names found (nil: nothing).
	Chains *drill.ChainCheck `json:"chains,omitempty"`
	// DrillStarted is when a restore drill of the entry started that has not reported yet: set
	// before it reads anything, removed with its result (Drill). Found set when no drill of the
	// entry runs, it says the drill's process ended during it (pkg/controller/restoredrill).
	DrillStarted *metav1.Time `json:"drillStarted,omitempty"`

	// CopyDrill and CopyDrillStarted are Drill and DrillStarted of the copy bucket the seed
	// configuration declares (pkg/controller/restoredrill): removed when no copy is declared.
	CopyDrill        *drill.Status `json:"copyDrill,omitempty"`
	CopyDrillStarted *metav1.Time  `json:"copyDrillStarted,omitempty"`

	// EtcdContainer is the bucket the shoot's Etcd named (spec.backup.store.container) when the
	// entry's last successful reconcile or restore decided its etcd-backup for it
	// (connect.DecideEtcdBackup); empty when that decision did not read the Etcd (no copy
	// declared, or no Etcd). Written by the BackupEntry controller; an Etcd seen at a process's
	// start that still names it needs no reconcile of the entry.
	EtcdContainer string `json:"etcdContainer,omitempty"`
}

// ProviderStatusAPIVersion and ProviderStatusKind identify ProviderStatus.
const (
	ProviderStatusAPIVersion = "backup.extensions.gardener.cloud/v1alpha1"
	ProviderStatusKind       = "BackupEntryStatus"
)

// ReadProviderStatus decodes an entry's status.providerStatus (empty when there is none).
func ReadProviderStatus(be *extensionsv1alpha1.BackupEntry) (ProviderStatus, error) {
	var ps ProviderStatus
	if be.Status.ProviderStatus == nil || len(be.Status.ProviderStatus.Raw) == 0 {
		return ps, nil
	}
	err := json.Unmarshal(be.Status.ProviderStatus.Raw, &ps)
	return ps, err
}

// MergeProviderStatus changes one part of be's status.providerStatus and keeps the others: the
// inventory and the restore drill are published by different controllers, each through its own
// status patch. set changes the decoded status (empty when it is not ours or cannot be read:
// the next inventory and drill replace it); a status left with no part removes providerStatus.
func MergeProviderStatus(be *extensionsv1alpha1.BackupEntry, set func(*ProviderStatus)) {
	ps, err := ReadProviderStatus(be)
	if err != nil {
		ps = ProviderStatus{}
	}
	set(&ps)
	if ps.Inventory == nil && ps.Drill == nil && ps.Chains == nil && ps.DrillStarted == nil && ps.CopyDrill == nil && ps.CopyDrillStarted == nil && ps.EtcdContainer == "" {
		be.Status.ProviderStatus = nil
		return
	}
	ps.TypeMeta = metav1.TypeMeta{APIVersion: ProviderStatusAPIVersion, Kind: ProviderStatusKind}
	raw, err := json.Marshal(ps)
	if err != nil { // plain structs of strings, numbers and times: not reached
		panic(err)
	}
	be.Status.ProviderStatus = &runtime.RawExtension{Raw: raw}
}
