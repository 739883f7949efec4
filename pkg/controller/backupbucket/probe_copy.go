// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionCopyBucketAvailable on a BackupBucket says whether the copy bucket its seed
// configuration declares (`copy:`) answered the probe's last listing (of at most one object) with
// the copy's credentials: True/Available, False with probeVerdict's reason (SecretMissing,
// BucketNotFound, Unauthenticated, Forbidden, InvalidCredentials, Unreachable), Unknown/Throttled.
// It says the copy can be reached and read now; that the copy bucket is converged (created,
// hardened) is CopyBucketReady's, which the BackupBucket's reconciles write. Probed on
// BucketAvailable's schedule; absent when no copy is declared or the copy is refused
// (CopyBucketReady False CopyBucketInvalid). It never changes BucketAvailable.
const ConditionCopyBucketAvailable gardencorev1beta1.ConditionType = "CopyBucketAvailable"

// Event reasons of the copy bucket's probe, emitted when CopyBucketAvailable changes.
const (
	ReasonCopyBucketAvailable   = "CopyBucketAvailable"
	ReasonCopyBucketUnavailable = "CopyBucketUnavailable"
)

// copyAction is what a look does to CopyBucketAvailable.
type copyAction int

const (
	// copyKeep leaves it as it is (the configuration does not decode: whether a copy is
	// declared is unknown; the reconcile reports the configuration).
	copyKeep copyAction = iota
	// copyRemove removes it: no copy is declared, or the declared one is refused.
	copyRemove
	// copySet sets it to the probe's verdict.
	copySet
)

// probeCopy probes the copy bucket cfg declares with the copy's credentials (probeOnce, as the
// primary) and publishes copy_bucket_available. cfgErr is the configuration's decoding error.
func (p *prober) probeCopy(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, cfgErr error) (verdict, copyAction) {
	if cfgErr != nil {
		return verdict{}, copyKeep
	}
	// A copy CopyPlaceOf refuses (a copy.type this binary writes no copy of) is not probed; the
	// reconcile reports it (CopyBucketReady).
	place, err := connect.CopyPlaceOf(p.Provider, cfg, bb.Name)
	if err != nil || place == nil || notThePrimary(place, bb) != nil {
		metrics.CopyBucketAvailable.DeletePartialMatch(prometheus.Labels{"bucket": bb.Name})
		return verdict{}, copyRemove
	}
	r := probed{label: metrics.CredentialsCopy, what: fmt.Sprintf("the copy's credentials (secret %s/%s)", place.Secret.Namespace, place.Secret.Name)}
	r.err = probeOnce(ctx, r.label, place.Bucket, func() (objectstore.DataPlane, error) {
		return place.NewDataPlane(ctx, p.Reader, p.Provider)
	})
	if !errors.Is(r.err, objectstore.ErrThrottled) { // a throttled probe tells nothing
		metrics.CopyBucketAvailable.DeletePartialMatch(prometheus.Labels{"bucket": bb.Name}) // an earlier copy bucket's
		metrics.CopyBucketAvailable.WithLabelValues(bb.Name, place.Bucket).Set(availability(r.err))
	}
	return summarize(fmt.Sprintf("Copy bucket %q%s", place.Bucket, inRegion(place.Region)), []probed{r}), copySet
}
