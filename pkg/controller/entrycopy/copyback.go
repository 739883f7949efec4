// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"fmt"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// Reasons of BackupsCopied while copying back (connect's, which the entry's reconcile reads).
const (
	ReasonCopyingBack = connect.ReasonCopyingBack
	ReasonCopiedBack  = connect.ReasonCopiedBack
)

// copyBackRetry is how soon a reverse pass that copied snapshots is followed by the one that
// must find nothing missing.
const copyBackRetry = 10 * time.Second

// way is which pass a look makes while copy.serve is primary.
type way int

const (
	// wayForward: the entry's bucket into the copy (the shoot writes the entry's bucket).
	wayForward way = iota
	// wayBack: the copy into the entry's bucket: the shoot's etcd-backup names the copy bucket
	// and the shoot writes it (connect's flip-back guard keeps it there until a reverse pass
	// found nothing missing).
	wayBack
	// wayCatchUp: etcd-backup names the entry's bucket again, but the shoot still writes the
	// copy (connect.Served.WritesCopy: its Etcd names the copy bucket until gardenlet rolls it):
	// every look makes a reverse pass, so that what it writes there reaches the entry's bucket.
	wayCatchUp
	// wayFinal: the shoot writes the entry's bucket again since the last reverse pass: one more
	// reverse pass brings what it wrote into the copy between that pass and the switch; once it
	// holds everything, the forward pass follows in the same look.
	wayFinal
)

// decideWay is the pure decision of the pass's direction while copy.serve is primary
// (table-tested): writesCopy is whether the shoot writes the copy bucket now
// (connect.Served.WritesCopy), namesCopy whether its etcd-backup names the copy bucket (not the
// entry's own), lastReason BackupsCopied's reason.
func decideWay(writesCopy, namesCopy bool, lastReason string) way {
	switch {
	case writesCopy && namesCopy:
		return wayBack
	case writesCopy:
		return wayCatchUp
	case lastReason == ReasonCopyingBack || lastReason == ReasonCopiedBack:
		return wayFinal
	}
	return wayForward
}

// decideBack is the pure decision of BackupsCopied after a reverse pass (table-tested): Unknown
// CopyingBack while either store cannot be read (etcd-backup keeps naming the copy), False
// CopyingBack while the entry's bucket lacks snapshots of the copy (how many, or a conflict an
// operator must look at), True CopiedBack once a pass found nothing to copy (after the switch
// of bucketName, wayCatchUp and wayFinal: once it copied everything it found).
func decideBack(o outcome, bucket, copyBucket string, w way) verdict {
	switched := w == wayCatchUp || w == wayFinal
	stays := fmt.Sprintf("the shoot's etcd-backup keeps naming the copy bucket %q", copyBucket)
	switch w {
	case wayCatchUp:
		stays = fmt.Sprintf("the shoot's etcd-backup names bucket %q again, but the shoot writes the copy bucket %q until gardenlet rolls its Etcd onto bucket %q (at the shoot's next reconcile), and each look copies that back", bucket, copyBucket, bucket)
	case wayFinal:
		stays = fmt.Sprintf("the shoot writes bucket %q again; what it wrote into the copy bucket %q before is still to be copied back", bucket, copyBucket)
	}
	switch {
	case o.copyErr != nil:
		return verdict{status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack,
			message: fmt.Sprintf("copy.serve is primary, but the copy bucket %q cannot be read to copy its snapshots back: %v; %s.", copyBucket, o.copyErr, stays)}
	case o.sourceErr != nil:
		return verdict{status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack,
			message: fmt.Sprintf("copy.serve is primary, but bucket %q cannot be reached (listed or written) to copy the copy's snapshots back into it: %v; %s.", bucket, o.sourceErr, stays)}
	}
	r := o.result
	superseded := supersededNote(r.Plan, bucket)
	// Before the switch only a pass that found nothing to copy counts (what it copied may have
	// been joined by newer snapshots meanwhile); after it a pass needs only to have copied
	// everything it found: the guard does not hold etcd-backup any more, and while the shoot
	// still writes the copy the next look copies what it wrote since.
	if r.Done() && (len(r.Plan.Copy) == 0 || switched) {
		next := fmt.Sprintf("the shoot's etcd-backup names bucket %q from the entry's next reconcile", bucket)
		if w == wayCatchUp {
			next = stays
		}
		return verdict{status: gardencorev1beta1.ConditionTrue, reason: ReasonCopiedBack,
			message: fmt.Sprintf("copy.serve is primary: bucket %q holds every snapshot of the copy bucket %q (%d in sync) it needs; %s.%s", bucket, copyBucket, r.Plan.InSync, next, superseded)}
	}
	left := len(r.Plan.Copy) - r.Copied + len(r.Plan.Conflicts) // failed and raced ones are not in Copied
	msg := fmt.Sprintf("copy.serve is primary: copying the copy bucket %q's snapshots back into bucket %q: the last pass copied %d, %d are left; %s until a pass finds none missing.", copyBucket, bucket, r.Copied, left, stays)
	if len(r.Plan.Conflicts) > 0 {
		c := r.Plan.Conflicts[0]
		msg += fmt.Sprintf(" Bucket %q holds %d snapshots differently from the copy and not older, which are never overwritten; the first: %q. An operator must look.", bucket, len(r.Plan.Conflicts), c.Source.Key)
	}
	if o.copyFailed != nil {
		msg += fmt.Sprintf(" %d were not copied: %v.", len(r.Failed), o.copyFailed)
	}
	return verdict{status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, message: msg + superseded}
}

// supersededNote is what BackupsCopied says of the copy's snapshots a reverse pass left out
// (replication.Plan.Superseded), with a leading space; "" for none.
func supersededNote(p replication.Plan, bucket string) string {
	if len(p.Superseded) == 0 {
		return ""
	}
	return fmt.Sprintf(" %d snapshots of the copy bucket are never copied back: their revisions reach the chain etcd-backup-restore writes into bucket %q since the shoot's Etcd names it again (a restore would apply them twice); the first: %q.", len(p.Superseded), bucket, p.Superseded[0].Key)
}

// handover is what the final reverse pass hands over to the forward pass of the same look.
type handover struct {
	// due is set when the final reverse pass left nothing missing: the forward pass is due now.
	due bool
	// note is what the final reverse pass has to say in BackupsCopied (supersededNote).
	note string
}

// copyBack makes the look's reverse passes while copy.serve is primary (decideWay): with
// wayBack the verdict is published and, once CopiedBack, the entry's reconcile is asked for
// (the operation annotation) so that it switches etcd-backup to the entry's bucket at once; with
// wayCatchUp the verdict is published and the next look passes again; with wayFinal a pass that
// leaves nothing missing hands over to the forward pass (done false, caughtUp.due: the forward
// pass is due at once, and its BackupsCopied says caughtUp.note).
func (c *copier) copyBack(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace) (res reconcile.Result, done bool, caughtUp handover, err error) {
	if place.IsBucket(be.Spec.BucketName) {
		return reconcile.Result{}, false, handover{}, nil
	}
	if serves, err := connect.ServesCopy(ctx, c.Reader, place, be.Spec.BucketName); serves || err != nil {
		return reconcile.Result{}, err != nil, handover{}, err // copy.serve copy or a recorded failover: servingFromCopy's
	}
	served, err := connect.ServedOf(ctx, c.Reader, c.Provider, be)
	if err != nil {
		return reconcile.Result{}, true, handover{}, err
	}
	named, err := entryinfo.EtcdBackupBucket(ctx, c.Reader, be)
	if err != nil {
		return reconcile.Result{}, true, handover{}, err
	}
	last := ""
	if cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsCopied); cond != nil {
		last = cond.Reason
	}
	w := decideWay(served.WritesCopy, named == place.Bucket, last)
	if w == wayForward {
		return reconcile.Result{}, false, handover{}, nil
	}
	o := c.passWay(ctx, be, place, w)
	v := decideBack(o, be.Spec.BucketName, place.Bucket, w)
	metrics.EntryCopyLag.DeletePartialMatch(map[string]string{"entry": be.Name}) // the forward lag is not measured meanwhile
	if r := o.result; r.Copied > 0 {
		log.FromContext(ctx).Info("Copy-back pass copied snapshots into the entry's bucket", "copied", r.Copied, "bytes", r.Bytes, "copyBucket", place.Bucket, "switched", w != wayBack)
	}
	if r := o.result; len(r.Plan.Superseded) > 0 {
		log.FromContext(ctx).Info("Copy-back pass left out snapshots of the copy whose revisions reach the chain the shoot writes into the entry's bucket again",
			"superseded", len(r.Plan.Superseded), "first", r.Plan.Superseded[0].Key, "copyBucket", place.Bucket)
	}
	interval := periodic.Jitter(place.Settings.IntervalOr(c.opts.Interval))
	if w == wayFinal && v.reason == ReasonCopiedBack {
		return reconcile.Result{}, false, handover{due: true, note: supersededNote(o.result.Plan, be.Spec.BucketName)}, nil // the forward pass publishes BackupsCopied
	}
	if err := c.publish(ctx, be, &v); err != nil {
		return reconcile.Result{}, true, handover{}, err
	}
	switch {
	case v.reason == ReasonCopiedBack && w == wayBack:
		if err := reconciled.RequestReconcile(ctx, c.Client, be); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, true, handover{}, fmt.Errorf("asking for a reconcile of BackupEntry %s to serve bucket %q again: %w", be.Name, be.Spec.BucketName, err)
		}
		return reconcile.Result{RequeueAfter: interval}, true, handover{}, nil
	case v.status == gardencorev1beta1.ConditionUnknown || o.copyFailed != nil:
		// Published in BackupsCopied, as the forward pass does: tried again in a minute.
		return reconcile.Result{RequeueAfter: unavailableRetry}, true, handover{}, nil //nolint:nilerr // the failure is the condition's
	case o.result.Copied > 0:
		return reconcile.Result{RequeueAfter: copyBackRetry}, true, handover{}, nil
	}
	return reconcile.Result{RequeueAfter: interval}, true, handover{}, nil
}

// passBack is the reverse pass: from the copy bucket (data, the copy's credentials) into the
// entry's bucket (primary, its own credentials), streamed (the entry's credentials are not
// granted reads of the copy bucket). It never deletes in either store. The final pass (wayFinal,
// once the shoot's Etcd names the entry's bucket again) never copies a snapshot whose revisions
// reach the chain the shoot's new writer started there (replication.Options.KeepDestinationChain):
// those are reported, not missing. Before (wayBack, wayCatchUp) nothing writes the entry's
// bucket: what it alone holds is history (snapshots the forward pass had not copied before the
// outage), which must not stop the copy's snapshots from coming back.
func (c *copier) passBack(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace, primary, data objectstore.DataPlane, prefix objectstore.Prefix, w way) outcome {
	dst, ok := primary.(replication.Destination)
	if !ok {
		return outcome{sourceErr: fmt.Errorf("the %s store writes no streams yet (objectstore.StreamWriter): %w", c.Provider.Type(), objectstore.ErrUnsupported)}
	}
	ctx = objectstore.WithOperation(ctx, "copy")
	opts := c.passOptions(ctx, be)
	// Once the shoot writes the entry's bucket again, etcd-backup-restore's chain there goes on
	// from its newest snapshot: a delta the old writer put into the copy meanwhile overlaps it.
	opts.KeepDestinationChain = w == wayFinal
	res, err := replication.Copy(ctx,
		replication.From{Store: data, Bucket: place.Bucket},
		replication.To{Store: dst, Bucket: be.Spec.BucketName}, prefix, opts)
	return outcomeOf(res, err, replication.SideSource) // the copy bucket is read
}
