// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Check names.
const (
	CheckProbe        = "Probe"
	CheckBackupsFresh = "BackupsFresh"
)

// errCannotPlan: the provider's management plane does not implement objectstore.BucketPlanner.
var errCannotPlan = errors.New("this provider's management plane cannot plan (objectstore.BucketPlanner)")

// Bucket rehearses the takeover of bb: its providerConfig, the operator's secret, the plan of
// EnsureBucket (objectstore.BucketPlanner) and of the credential lifecycle
// (backupbucket.PlanCredentials), and a probe with the operator's credentials. reader must read
// secrets from the API server. Nothing is written.
func Bucket(ctx context.Context, p provider.Provider, reader client.Reader, bb *extensionsv1alpha1.BackupBucket) Report {
	r := Report{Kind: KindBackupBucket, Name: bb.Name}
	var changes []objectstore.BucketChange
	cfg, err := connect.BucketConfig(p, bb)
	steps := []Step{{What: "spec.providerConfig", Err: err, Refusal: true}}
	if err == nil {
		steps = append(steps, planBucket(ctx, p, reader, bb, cfg, &changes)...)
	}
	if r.Verdict, r.Reason = Decide(steps); r.Verdict == Adoptable {
		r.Changes = changes
	}
	r.Checks = []Check{probe(ctx, p, reader, bb.Spec.SecretRef, bb.Spec.Region, bb.Name, "the operator's credentials")}
	return r
}

// planBucket is the steps of bb's plan after its config; the changes of those that succeeded
// are appended to changes.
func planBucket(ctx context.Context, p provider.Provider, reader client.Reader, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, changes *[]objectstore.BucketChange) []Step {
	mgmt, err := connect.NewManagement(ctx, reader, bb.Spec.SecretRef, bb.Spec.Region, cfg)
	if err != nil {
		return []Step{{What: "credentials secret", Err: err}}
	}
	planner, ok := mgmt.(objectstore.BucketPlanner)
	if !ok {
		return []Step{{What: "plan", Err: errCannotPlan}}
	}
	planned, err := planner.PlanBucket(objectstore.WithOperation(ctx, objectstore.OpEnsureBucket), objectstore.Bucket{Name: bb.Name, Region: bb.Spec.Region})
	if err != nil {
		return []Step{{What: fmt.Sprintf("plan of bucket %q", bb.Name), Err: err, Refusal: true}}
	}
	*changes = append(*changes, planned...)
	creds, err := backupbucket.PlanCredentials(ctx, p, reader, bb, cfg)
	if err != nil {
		return []Step{{What: "plan of the generated credentials", Err: err}}
	}
	*changes = append(*changes, creds...)
	return nil
}

// Entry rehearses the takeover of be: what its reconcile would write (backupentry.PlanEntry), a
// probe of its bucket with its credentials, and its inventory judged as BackupsFresh would be
// (entryinventory.Rehearse). bucketVerdict is its bucket's verdict where this seed has that
// bucket (nil: it has not, e.g. a source- entry's): an entry of a bucket that cannot be taken
// over cannot be either. Nothing is written.
func Entry(ctx context.Context, p provider.Provider, reader client.Reader, inv entryinventory.Options, be *extensionsv1alpha1.BackupEntry, bucket *Report, now time.Time) Report {
	r := Report{Kind: KindBackupEntry, Name: be.Name}
	var steps []Step
	if bucket != nil && bucket.Verdict != Adoptable {
		steps = append(steps, Step{What: "its BackupBucket " + bucket.Name, Err: bucketError{bucket: *bucket}, Refusal: bucket.Verdict == NotAdoptable})
	}
	changes, err := backupentry.PlanEntry(ctx, p, reader, be)
	steps = append(steps, Step{What: "plan", Err: err, Refusal: true})
	if r.Verdict, r.Reason = Decide(steps); r.Verdict == Adoptable {
		r.Changes = changes
	}
	r.Checks = []Check{probe(ctx, p, reader, be.Spec.SecretRef, be.Spec.Region, be.Spec.BucketName, "the entry's credentials")}
	_, verdict := entryinventory.Rehearse(ctx, p, reader, inv, be, now)
	r.Checks = append(r.Checks, Check{Name: CheckBackupsFresh, Status: verdict.Status, Reason: verdict.Reason, Message: verdict.Message})
	return r
}

// bucketError is an entry's bucket that is not adoptable: NotAdoptable's refusal counts for the
// entry too (errors.Is ErrInvalidConfig), CannotTell's does not.
type bucketError struct{ bucket Report }

func (e bucketError) Error() string { return e.bucket.Reason }
func (e bucketError) Is(target error) bool {
	return e.bucket.Verdict == NotAdoptable && target == objectstore.ErrInvalidConfig
}

// probe reads bucket once with the credentials of ref, as BucketAvailable's probe does, without
// its metrics or condition.
func probe(ctx context.Context, p provider.Provider, reader client.Reader, ref corev1.SecretReference, region, bucket, with string) Check {
	data, err := connect.NewDataPlane(ctx, reader, p, ref, region)
	if err == nil {
		err = data.Probe(objectstore.WithOperation(ctx, objectstore.OpProbe), bucket)
	}
	if err != nil {
		status, reason := backupbucket.ProbeVerdict(err)
		return Check{Name: CheckProbe, Status: status, Reason: reason, Message: fmt.Sprintf("Bucket %q did not answer a listing with %s (secret %s/%s): %v.", bucket, with, ref.Namespace, ref.Name, err)}
	}
	return Check{Name: CheckProbe, Status: gardencorev1beta1.ConditionTrue, Reason: "Available", Message: fmt.Sprintf("Bucket %q answered a listing with %s (secret %s/%s).", bucket, with, ref.Namespace, ref.Name)}
}
