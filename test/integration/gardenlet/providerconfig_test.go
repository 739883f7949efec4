// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"fmt"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestUnsortedProviderConfig pins a gardenlet v1.150 behaviour the extension cannot change: a
// core BackupBucket whose providerConfig keys are not in sorted order is never Succeeded. The seed's
// API server stores the extension BackupBucket's providerConfig re-encoded with sorted keys, and
// gardenlet compares the spec it wants with the stored one byte for byte
// (gardener pkg/gardenlet/controller/backupbucket/reconciler.go:203; the entry controller the same
// at backupentry/reconciler.go:231): after every successful reconcile it asks for another. If this
// test fails because the core bucket became Succeeded, gardenlet fixed it: the sorted keys in
// fixtures_test.go and this test can go.
func TestUnsortedProviderConfig(t *testing.T) {
	requireStack(t)
	bb := coreBucket(t, unsortedConfig)
	t.Cleanup(func() {
		if err := garden.Delete(ctx(), bb); err == nil {
			waitGone(t, garden, bb, 2*time.Minute, "the core BackupBucket is deleted")
		}
	})
	// gardenlet's reconcile requests (its timestamp annotation) after the extension first succeeded.
	requested, succeeded := map[string]bool{}, ""
	ext := &extensionsv1alpha1.BackupBucket{}
	eventually(t, 2*time.Minute, "gardenlet asks again and again for reconciles the extension finished", func() (bool, string) {
		if err := seed.Get(ctx(), client.ObjectKey{Name: bb.Name}, ext); err != nil {
			return false, err.Error()
		}
		stamp := ext.Annotations[v1beta1constants.GardenerTimestamp]
		// Succeeded, whether or not gardenlet already asked again (it does within milliseconds).
		if op := ext.Status.LastOperation; succeeded == "" && op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded {
			succeeded = stamp
		}
		if succeeded != "" && stamp != succeeded {
			requested[stamp] = true
		}
		return len(requested) >= 3, fmt.Sprintf("%d requests after a success; %s", len(requested), framework.Describe(ext))
	})
	core := waitBucket(t, bb.Name, time.Second, "read", func(*gardencorev1beta1.BackupBucket) bool { return true })
	if bucketSucceeded(core) {
		t.Fatalf("the core BackupBucket is Succeeded although gardenlet keeps re-requesting reconciles: %s", describe(core.Status.LastOperation, core.Status.LastError, core.Generation, core.Status.ObservedGeneration))
	}
	t.Logf("gardenlet asked %d times for a reconcile after the extension had succeeded; the core bucket shows: %s (core providerConfig %s; extension's %s)",
		len(requested), describe(core.Status.LastOperation, core.Status.LastError, core.Generation, core.Status.ObservedGeneration), raw(core.Spec.ProviderConfig), raw(ext.Spec.ProviderConfig))
}
