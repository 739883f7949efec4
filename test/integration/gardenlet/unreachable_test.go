// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStoreUnreachable is scenario e: the store becomes unreachable while gardenlet waits for a
// bucket's reconcile; the core BackupBucket shows the extension's error with its code
// (ERR_RETRYABLE_INFRA_DEPENDENCIES: objectstore.ErrUnreachable) and recovers once the store is
// back. (Before, a connection failure carried no code, and gardenlet's view none either.)
func TestStoreUnreachable(t *testing.T) {
	requireStack(t)
	bb := coreBucket(t, bucketConfig)
	waitBucket(t, bb.Name, 2*time.Minute, "Succeeded", bucketSucceeded)

	proxy.SetDown(true)
	t.Cleanup(func() { proxy.SetDown(false) })
	// A change of the bucket's spec (the same settings in another order) makes gardenlet ask the
	// extension for a reconcile, which cannot reach the store.
	if err := garden.Get(ctx(), client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(strings.Replace(bucketConfig,
		`["PublicAccessBlock","MultipartAbortLifecycle"]`, `["MultipartAbortLifecycle","PublicAccessBlock"]`, 1))}
	if err := garden.Update(ctx(), bb); err != nil {
		t.Fatal(err)
	}
	failed := waitBucket(t, bb.Name, 2*time.Minute, "lastError while the store is unreachable", func(bb *gardencorev1beta1.BackupBucket) bool {
		return bb.Status.LastError != nil && bb.Status.LastOperation != nil && bb.Status.LastOperation.State == gardencorev1beta1.LastOperationStateError
	})
	ext := &extensionsv1alpha1.BackupBucket{}
	if err := seed.Get(ctx(), client.ObjectKeyFromObject(bb), ext); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(failed.Status.LastError.Description, "error during reconciliation: ") {
		t.Errorf("core lastError %q is not gardenlet's copy of the extension's", failed.Status.LastError.Description)
	}
	if ext.Status.LastError != nil && !slices.Equal(failed.Status.LastError.Codes, ext.Status.LastError.Codes) {
		t.Errorf("core lastError codes %v; the extension reported %v", failed.Status.LastError.Codes, ext.Status.LastError.Codes)
	}
	if !slices.Contains(failed.Status.LastError.Codes, gardencorev1beta1.ErrorRetryableInfraDependencies) {
		t.Errorf("core lastError codes %v; want %s for an unreachable store", failed.Status.LastError.Codes, gardencorev1beta1.ErrorRetryableInfraDependencies)
	}
	t.Logf("gardenlet shows: lastOperation %s/%s, lastError codes %v, description %q",
		failed.Status.LastOperation.Type, failed.Status.LastOperation.State, failed.Status.LastError.Codes, failed.Status.LastError.Description)

	proxy.SetDown(false)
	waitBucket(t, bb.Name, 3*time.Minute, "Succeeded again once the store is back", bucketSucceeded)

	if err := garden.Delete(ctx(), bb); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, bb, 2*time.Minute, "the core BackupBucket is deleted")
}
