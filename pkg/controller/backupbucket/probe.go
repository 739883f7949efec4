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

// probeLifecycle is what the probe publishes on a bucket: BucketAvailable, CopyBucketAvailable
// and the headroom of entry credentials (read on the same interval), and their series. A bucket being deleted is
// not expected to be available: no verdict.
var probeLifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupBucket]{
	Conditions: []gardencorev1beta1.ConditionType{ConditionBucketAvailable, ConditionEntryCredentialsHeadroom, ConditionCopyBucketAvailable},
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
	cfg, cfgErr := connect.BucketConfig(p.Provider, bb)
	if errors.As(cfgErr, new(*provider.SeedConfigPendingError)) {
		log.FromContext(ctx).Info("Not probing the bucket while the seed configuration is awaited", "reason", cfgErr.Error())
		return reconcile.Result{RequeueAfter: seedConfigRetry}, nil
	}

	primary := p.probe(ctx, bb)
	// The copy bucket is probed on the same schedule, into a condition of its own: a failing
	// copy never changes the primary's verdict.
	copyVerdict, copyAction := p.probeCopy(ctx, bb, cfg, cfgErr)
	var previous, previousCopy *gardencorev1beta1.Condition
	var failover failoverPlan
	var failoverErr error
	err := extstatus.Patch(ctx, p.Client, p.Reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		bb.Status.Conditions, previous = extstatus.SetCondition(bb.Status.Conditions, ConditionBucketAvailable, primary.status, primary.reason, primary.message, now)
		switch copyAction {
		case copySet:
			bb.Status.Conditions, previousCopy = extstatus.SetCondition(bb.Status.Conditions, ConditionCopyBucketAvailable, copyVerdict.status, copyVerdict.reason, copyVerdict.message, now)
		case copyRemove:
			bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionCopyBucketAvailable)
		}
		// copy.failover: decided over the conditions as this probe leaves them.
		failover, failoverErr = failoverPlan{}, nil
		if o, ok := observeFailover(bb, cfg, cfgErr, now); ok {
			failover = decideFailover(o)
			if _, failoverErr = applyFailover(bb, failover); failoverErr != nil {
				failover = failoverPlan{} // nothing written: nothing announced
			}
		}
		return true // LastUpdateTime records the probe: it is when the next one is due
	})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("setting the %s condition of BackupBucket %s: %w", ConditionBucketAvailable, bb.Name, err)
	}
	p.announce(bb, previous, primary, ReasonBucketAvailable, ReasonBucketUnavailable)
	if copyAction == copySet {
		p.announce(bb, previousCopy, copyVerdict, ReasonCopyBucketAvailable, ReasonCopyBucketUnavailable)
	}
	if failoverErr != nil {
		return reconcile.Result{}, fmt.Errorf("the automatic failover of BackupBucket %s: %w", bb.Name, failoverErr)
	}
	if err := p.announceFailover(ctx, bb, failover); err != nil {
		return reconcile.Result{}, err
	}
	// The headroom of entry credentials is read on the same interval (publishHeadroom).
	if err := p.publishHeadroom(ctx, bb, now); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: periodic.Jitter(p.opts.Interval)}, nil
}

// verdict is one availability condition's status, reason and message.
type verdict struct {
	status          gardencorev1beta1.ConditionStatus
	reason, message string
}

// announce emits an event when a probe's condition changed from previous (nil: it had none).
func (p *prober) announce(bb *extensionsv1alpha1.BackupBucket, previous *gardencorev1beta1.Condition, v verdict, available, unavailable string) {
	if previous != nil && previous.Status == v.status && previous.Reason == v.reason {
		return
	}
	eventType, eventReason := corev1.EventTypeNormal, available
	if v.status != gardencorev1beta1.ConditionTrue {
		eventType, eventReason = corev1.EventTypeWarning, unavailable
	}
	p.Recorder.Eventf(bb, nil, eventType, eventReason, "Probe", "%s", extstatus.EventNote(v.message))
}

// probed is one probe of one bucket with one set of credentials.
type probed struct {
	label, what string
	err         error
}

// probe reads the bucket once with each set of credentials shoots or the extension use.
func (p *prober) probe(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) verdict {
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
		results[i].err = probeOnce(ctx, results[i].label, bb.Name, func() (objectstore.DataPlane, error) {
			return connect.NewDataPlane(ctx, p.Reader, p.Provider, ref, bb.Spec.Region)
		})
		if !errors.Is(results[i].err, objectstore.ErrThrottled) { // a throttled probe tells nothing
			metrics.BucketAvailable.WithLabelValues(bb.Name, results[i].label).Set(availability(results[i].err))
		}
	}
	return summarize(fmt.Sprintf("Bucket %q", bb.Name), results)
}

// probeOnce is the probe of one bucket with one set of credentials, the same for the primary and
// the copy: a listing of at most one object with the data plane open builds (a probe needs no
// providerConfig), its duration observed by label.
func probeOnce(ctx context.Context, label, bucket string, open func() (objectstore.DataPlane, error)) error {
	start := time.Now()
	defer func() { metrics.ProbeDuration.WithLabelValues(label).Observe(time.Since(start).Seconds()) }()
	data, err := open()
	if err != nil {
		return err
	}
	return data.Probe(objectstore.WithOperation(ctx, objectstore.OpProbe), bucket)
}

// availability is a probe's gauge value: 1 reached, 0 not.
func availability(err error) float64 {
	if err == nil {
		return 1
	}
	return 0
}

// summarize is the verdict on what (e.g. `Bucket "b"`) from its probes: True when every set of
// credentials reached it, else the first real failure's reason, every failure in the message.
func summarize(what string, results []probed) verdict {
	var failed, reached []string
	v := verdict{status: gardencorev1beta1.ConditionTrue, reason: "Available"}
	for _, r := range results {
		if r.err == nil {
			reached = append(reached, r.what)
			continue
		}
		failed = append(failed, fmt.Sprintf("with %s: %v", r.what, r.err))
		if v.status == gardencorev1beta1.ConditionTrue || v.reason == "Throttled" { // the first real failure names the reason
			v.status, v.reason = probeVerdict(r.err)
		}
	}
	if len(failed) == 0 {
		v.message = fmt.Sprintf("%s answered a listing with %s.", what, strings.Join(reached, " and with "))
	} else {
		v.message = fmt.Sprintf("%s did not answer a listing %s.", what, strings.Join(failed, "; "))
	}
	return v
}

// probeVerdict is the condition's status and reason for a failed probe.
func probeVerdict(err error) (gardencorev1beta1.ConditionStatus, string) {
	switch {
	case errors.Is(err, objectstore.ErrThrottled):
		return gardencorev1beta1.ConditionUnknown, "Throttled"
	case errors.As(err, new(*secrets.MissingError)), errors.Is(err, connect.ErrCopySecretMissing):
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
