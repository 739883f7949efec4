// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionBucketAvailable on a BackupBucket says whether the bucket answered the last probe (a
// listing of at most one object) with the operator's credentials and, where shoots get generated
// ones, with those too. Absent until the bucket's first successful reconcile.
const ConditionBucketAvailable gardencorev1beta1.ConditionType = "BucketAvailable"

// ReasonDeleting is BucketAvailable's reason (Unknown) while the BackupBucket is being deleted: it
// is no longer probed.
const ReasonDeleting = periodic.ReasonDeleting

// Event reasons of the probe, emitted when the condition changes.
const (
	ReasonBucketAvailable   = "BucketAvailable"
	ReasonBucketUnavailable = "BucketUnavailable"
)

// seedConfigRetry is how soon a bucket is looked at again while the seed configuration is awaited.
const seedConfigRetry = 10 * time.Second

// prober probes each bucket on an interval. It only reads the store.
type prober struct {
	periodic.Deps

	opts ProbeOptions
}

// ProbeController is the probe of p's buckets as a periodic controller. With its interval 0
// (switched off) its one look at each bucket (at the start, and on spec or operation changes)
// removes the conditions an earlier run wrote, which nothing would refresh any more.
func ProbeController(opts ProbeOptions) periodic.Controller {
	return periodic.Controller{Name: "backupbucket-probe", Recorder: "backupbucket", For: &extensionsv1alpha1.BackupBucket{},
		New: func(d periodic.Deps) reconcile.Reconciler { return &prober{Deps: d, opts: opts} }}
}

// probeLifecycle is what the probe publishes on a bucket: BucketAvailable and the headroom of
// entry credentials (read on the same interval), and their series. A bucket being deleted is
// not expected to be available: no verdict.
var probeLifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupBucket]{
	Conditions: []gardencorev1beta1.ConditionType{ConditionBucketAvailable, ConditionEntryCredentialsHeadroom},
	Deleting: func(bb *extensionsv1alpha1.BackupBucket) string {
		return fmt.Sprintf("Bucket %q is being deleted: it is no longer probed.", bb.Name)
	},
	Forget: metrics.ForgetBucket,
	Gone: func(name string) {
		metrics.ForgetBucket(name)
		metrics.ForgetDeletion(metrics.KindBackupBucket, name)
		metrics.ForgetOperation(metrics.KindBackupBucket, name)
	},
}

// Reconcile implements reconcile.Reconciler.
func (p *prober) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return periodic.Reconcile(ctx, p.Deps, req, &extensionsv1alpha1.BackupBucket{}, p.opts.Interval, probeLifecycle, p.look)
}

// look probes a live bucket when its probe is due.
func (p *prober) look(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) (reconcile.Result, error) {
	now := p.Now()
	old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionBucketAvailable)
	if old == nil && !extstatus.Succeeded(bb) {
		return reconcile.Result{}, nil // not created yet: the first successful reconcile wakes us
	}
	if old != nil {
		next := old.LastUpdateTime.Add(p.opts.Interval)
		op := bb.Status.LastOperation
		reconciledSince := op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && op.LastUpdateTime.After(old.LastUpdateTime.Time)
		beforeStart := old.LastUpdateTime.Time.Before(p.Started) // no bucket_available series behind it here
		if now.Before(next) && !reconciledSince && !beforeStart {
			return reconcile.Result{RequeueAfter: next.Sub(now)}, nil
		}
	}

	// While the seed configuration in force is awaited every plane constructor fails with the
	// wait's error: that says nothing of the bucket. Nothing is written, emitted or measured, and
	// the bucket is looked at again soon.
	if _, err := connect.BucketConfig(p.Provider, bb); errors.As(err, new(*provider.SeedConfigPendingError)) {
		log.FromContext(ctx).Info("Not probing the bucket while the seed configuration is awaited", "reason", err.Error())
		return reconcile.Result{RequeueAfter: seedConfigRetry}, nil
	}

	status, reason, message := p.probe(ctx, bb)
	var previous *gardencorev1beta1.Condition
	err := extstatus.Patch(ctx, p.Client, p.Reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		bb.Status.Conditions, previous = extstatus.SetCondition(bb.Status.Conditions, ConditionBucketAvailable, status, reason, message, now)
		return true // LastUpdateTime records the probe: it is when the next one is due
	})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("setting the %s condition of BackupBucket %s: %w", ConditionBucketAvailable, bb.Name, err)
	}
	if previous == nil || previous.Status != status || previous.Reason != reason {
		eventType, eventReason := corev1.EventTypeNormal, ReasonBucketAvailable
		if status != gardencorev1beta1.ConditionTrue {
			eventType, eventReason = corev1.EventTypeWarning, ReasonBucketUnavailable
		}
		p.Recorder.Eventf(bb, nil, eventType, eventReason, "Probe", "%s", extstatus.EventNote(message))
	}
	// The headroom of entry credentials is read on the same interval (publishHeadroom).
	if err := p.publishHeadroom(ctx, bb, now); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: periodic.Jitter(p.opts.Interval)}, nil
}

// probe reads the bucket once with each set of credentials shoots or the extension use.
func (p *prober) probe(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) (gardencorev1beta1.ConditionStatus, string, string) {
	type probed struct {
		label, what string
		err         error
	}
	results := []probed{{label: metrics.CredentialsOperator, what: fmt.Sprintf("the operator's credentials (secret %s/%s)", bb.Spec.SecretRef.Namespace, bb.Spec.SecretRef.Name)}}
	if ref := bb.Status.GeneratedSecretRef; ref != nil {
		what := fmt.Sprintf("the generated credentials (secret %s/%s)", ref.Namespace, ref.Name)
		if gen := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionGeneratedCredentials); gen != nil && gen.Status == gardencorev1beta1.ConditionFalse {
			// Retiring, retired or passed through: the secret shoots get holds the operator's.
			what = fmt.Sprintf("the credentials published to shoots (secret %s/%s, a copy of the operator's: %s)", ref.Namespace, ref.Name, gen.Reason)
		}
		results = append(results, probed{label: metrics.CredentialsGenerated, what: what})
	} else {
		metrics.BucketAvailable.DeleteLabelValues(bb.Name, metrics.CredentialsGenerated)
	}
	for i := range results {
		ref := bb.Spec.SecretRef
		if results[i].label == metrics.CredentialsGenerated {
			ref = *bb.Status.GeneratedSecretRef
		}
		start := time.Now()
		results[i].err = p.probeWith(ctx, ref, bb.Spec.Region, bb.Name)
		metrics.ProbeDuration.WithLabelValues(results[i].label).Observe(time.Since(start).Seconds())
		available := 0.0
		if results[i].err == nil {
			available = 1
		}
		if !errors.Is(results[i].err, objectstore.ErrThrottled) { // a throttled probe tells nothing
			metrics.BucketAvailable.WithLabelValues(bb.Name, results[i].label).Set(available)
		}
	}

	var failed, reached []string
	status, reason := gardencorev1beta1.ConditionTrue, "Available"
	for _, r := range results {
		if r.err == nil {
			reached = append(reached, r.what)
			continue
		}
		failed = append(failed, fmt.Sprintf("with %s: %v", r.what, r.err))
		if status == gardencorev1beta1.ConditionTrue || reason == "Throttled" { // the first real failure names the reason
			status, reason = probeVerdict(r.err)
		}
	}
	if len(failed) == 0 {
		return status, reason, fmt.Sprintf("Bucket %q answered a listing with %s.", bb.Name, strings.Join(reached, " and with "))
	}
	return status, reason, fmt.Sprintf("Bucket %q did not answer a listing %s.", bb.Name, strings.Join(failed, "; "))
}

// probeWith reads the bucket once with the data plane of the credentials in ref (the same for
// every set of credentials: a probe needs no providerConfig).
func (p *prober) probeWith(ctx context.Context, ref corev1.SecretReference, region, bucket string) error {
	data, err := connect.NewDataPlane(ctx, p.Reader, p.Provider, ref, region)
	if err != nil {
		return err
	}
	return data.Probe(objectstore.WithOperation(ctx, objectstore.OpProbe), bucket)
}

// probeVerdict is the condition's status and reason for a failed probe.
func probeVerdict(err error) (gardencorev1beta1.ConditionStatus, string) {
	switch {
	case errors.Is(err, objectstore.ErrThrottled):
		return gardencorev1beta1.ConditionUnknown, "Throttled"
	case errors.As(err, new(*secrets.MissingError)):
		return gardencorev1beta1.ConditionFalse, "SecretMissing"
	case errors.Is(err, objectstore.ErrBucketNotFound):
		return gardencorev1beta1.ConditionFalse, "BucketNotFound"
	case errors.Is(err, objectstore.ErrUnauthenticated):
		return gardencorev1beta1.ConditionFalse, "Unauthenticated"
	case errors.Is(err, objectstore.ErrForbidden):
		return gardencorev1beta1.ConditionFalse, "Forbidden"
	case errors.Is(err, objectstore.ErrInvalidConfig):
		return gardencorev1beta1.ConditionFalse, "InvalidCredentials"
	}
	return gardencorev1beta1.ConditionFalse, "Unreachable"
}
