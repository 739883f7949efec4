// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"encoding/json"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

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
	if ps.Inventory == nil && ps.Drill == nil && ps.Chains == nil {
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
