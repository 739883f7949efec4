// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionFormerCopyBucketsEmpty on a BackupBucket reports copy buckets the extension converged
// that `copy:` no longer names (ProviderStatus.FormerCopies): False/HoldObjects when one still
// holds objects (named with its first keys), Unknown/Unreadable when one could not be listed.
// They are the operator's to delete; the extension neither deletes nor empties them. Absent while
// none is recorded.
const ConditionFormerCopyBucketsEmpty gardencorev1beta1.ConditionType = "FormerCopyBucketsEmpty"

// Reasons of FormerCopyBucketsEmpty and events of former copy buckets.
const (
	ReasonFormerCopyHoldsObjects = "HoldObjects"
	ReasonFormerCopyUnreadable   = "Unreadable"
	// ReasonFormerCopyBucket (Warning) reports a former copy bucket when the condition changes.
	ReasonFormerCopyBucket = "FormerCopyBucket"
	// ReasonFormerCopyBucketForgotten (Normal, or Warning when it could not be checked) ends the
	// record of one.
	ReasonFormerCopyBucketForgotten = "FormerCopyBucketForgotten"
)

// formerKeysNamed is how many keys of a former copy bucket are named.
const formerKeysNamed = 5

// locationOf is the place of a declared copy (nil: none); its Type is empty for a copy of the
// primary's type (primaryType), so that records written before the type was recorded name the
// same place.
func locationOf(place *connect.CopyPlace, primaryType string) *CopyLocation {
	if place == nil {
		return nil
	}
	l := &CopyLocation{Bucket: place.Bucket, Region: place.Region, CredentialsRef: place.Settings.CredentialsRef}
	if t := place.Provider.Type(); t != primaryType {
		l.Type = t
	}
	return l
}

func (l CopyLocation) String() string {
	of := ""
	if l.Type != "" {
		of = fmt.Sprintf(" in a store of type %s", l.Type)
	}
	return fmt.Sprintf("%q%s%s (credentials %s/%s%s)", l.Bucket, inRegion(l.Region), of, copystore.CredentialsNamespace, copystore.CredentialsPrefix, l.CredentialsRef)
}

// nextCopyRecord is the pure decision of what the reconcile records of the copy: declared is the
// place `copy:` names now (nil: none), converged whether this reconcile converged it
// (CopyBucketReady True). The place last converged becomes a former copy when declared differs
// from it; a former copy declared again is one no more; the declared place is recorded once
// converged, and kept while a later reconcile of the same place fails (it was converged).
func nextCopyRecord(ps ProviderStatus, declared *CopyLocation, converged bool) ProviderStatus {
	next := ps
	next.FormerCopies = slices.DeleteFunc(slices.Clone(ps.FormerCopies), func(l CopyLocation) bool { return declared != nil && l == *declared })
	if ps.Copy != nil && (declared == nil || *ps.Copy != *declared) {
		if !slices.Contains(next.FormerCopies, *ps.Copy) {
			next.FormerCopies = append(next.FormerCopies, *ps.Copy)
		}
		next.Copy = nil
	}
	if declared != nil && converged {
		d := *declared
		next.Copy = &d
	}
	if len(next.FormerCopies) == 0 {
		next.FormerCopies = nil
	}
	return next
}

// formerLook is what one listing of a former copy bucket found.
type formerLook struct {
	// Gone: the bucket does not exist. Empty: it holds nothing.
	Gone, Empty bool
	// First are its first keys (at most formerKeysNamed) when it holds objects.
	First []string
	// CredentialsGone: its credentials secret is not in the seed any more.
	CredentialsGone bool
	// Err is any other failure of the listing.
	Err error
}

// formerReport is the pure decision over the looks at the former copies: which stay recorded,
// what FormerCopyBucketsEmpty says (nil: remove it) and which records end with what note.
type formerReport struct {
	Keep      []CopyLocation
	Condition *gardencorev1beta1.Condition
	Ended     []formerEnd
}

type formerEnd struct {
	Location CopyLocation
	Warning  bool
	Note     string
}

// A former copy with the name, region and type of the declared one (only its credentials changed) is
// not listed: if both credentials reach the same store it is the copy itself, and it must not be
// called the operator's to delete.
func reportFormerCopies(formers []CopyLocation, looks []formerLook, declared *CopyLocation) formerReport {
	var r formerReport
	var holding, unreadable []string
	for i, l := range formers {
		look := looks[i]
		switch {
		case sameBucket(l, declared):
			r.Ended = append(r.Ended, formerEnd{Location: l, Warning: true, Note: fmt.Sprintf("The former copy bucket %s has the name and region of the copy bucket `copy:` names now, with other credentials: if both reach the same store it is the copy itself; otherwise it is the operator's to delete. It is no longer reported.", l)})
		case look.Gone:
			r.Ended = append(r.Ended, formerEnd{Location: l, Note: fmt.Sprintf("The former copy bucket %s is gone: it is no longer reported.", l)})
		case look.Empty:
			r.Ended = append(r.Ended, formerEnd{Location: l, Note: fmt.Sprintf("The former copy bucket %s is empty: it is no longer reported. The bucket stays, the operator's to delete.", l)})
		case look.CredentialsGone:
			r.Ended = append(r.Ended, formerEnd{Location: l, Warning: true, Note: fmt.Sprintf("The former copy bucket %s cannot be checked any more: its credentials secret is gone. Whatever it still holds is the operator's to delete; it is no longer reported.", l)})
		case look.Err != nil:
			r.Keep = append(r.Keep, l)
			unreadable = append(unreadable, fmt.Sprintf("%s could not be listed: %v", l, look.Err))
		default:
			r.Keep = append(r.Keep, l)
			holding = append(holding, fmt.Sprintf("%s still holds objects, first %s", l, strings.Join(quoted(look.First), ", ")))
		}
	}
	const tail = " `copy:` no longer names it: nothing is copied there; it is the operator's to delete (snapshots it holds are older copies of the entries' backups)."
	switch {
	case len(holding) > 0:
		r.Condition = &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonFormerCopyHoldsObjects,
			Message: "Former copy bucket " + strings.Join(append(holding, unreadable...), "; ") + "." + tail}
	case len(unreadable) > 0:
		r.Condition = &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonFormerCopyUnreadable,
			Message: "Former copy bucket " + strings.Join(unreadable, "; ") + "." + tail}
	}
	return r
}

// sameBucket: l has declared's bucket name, region and store type (declared nil: no); a bucket
// of that name in a store of another type is another bucket.
func sameBucket(l CopyLocation, declared *CopyLocation) bool {
	return declared != nil && l.Bucket == declared.Bucket && l.Region == declared.Region && l.Type == declared.Type
}

func quoted(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%q", k)
	}
	return out
}

// copySecretSeen is the resourceVersion of the declared copy's credentials secret now, "" when
// it is missing, nil when no copy is declared (or it is refused) or the secret cannot be read
// (then nothing is recorded and the watch asks again on its next change).
func (a *actuator) copySecretSeen(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) *string {
	place, err := connect.CopyPlaceOf(a.provider, cfg, bb.Name)
	if err != nil || place == nil || notThePrimary(place, bb) != nil {
		return nil
	}
	version, err := secretVersion(ctx, a.reader, place.Secret)
	if err != nil {
		return nil
	}
	return &version
}

// secretVersion reads the metadata of the secret ref: its resourceVersion, "" when it does not
// exist.
func secretVersion(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (string, error) {
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", err
	}
	return meta.ResourceVersion, nil
}

// recordCopy records, after reconcileCopy, the place of the copy converged and the secret
// version seen (nextCopyRecord), looks at each former copy bucket (one listing page with its own
// credentials) and reports them (reportFormerCopies). Nothing here fails the reconcile but a
// failed status write.
func (a *actuator) recordCopy(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, seen *string) error {
	place, err := connect.CopyPlaceOf(a.provider, cfg, bb.Name)
	if err != nil {
		// A copy this binary cannot write (a type without its store): CopyBucketReady says so
		// (CopyBucketInvalid); the record stays as it was, and so does what it reports.
		log.V(1).Info("The copy bucket's record is kept: its place cannot be built", "error", err.Error())
		return nil
	}
	ps, err := ReadProviderStatus(bb)
	if err != nil {
		return fmt.Errorf("recording the copy bucket: %w", err) // rewriting it would drop what it records
	}
	ready := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionCopyBucketReady)
	converged := place != nil && ready != nil && ready.Status == gardencorev1beta1.ConditionTrue
	declared := locationOf(place, a.provider.Type())
	next := nextCopyRecord(ps, declared, converged)
	next.CopySecretVersion = seen
	looks := make([]formerLook, len(next.FormerCopies))
	for i, l := range next.FormerCopies {
		if !sameBucket(l, declared) {
			looks[i] = a.lookAtFormer(ctx, l)
		}
	}
	report := reportFormerCopies(next.FormerCopies, looks, declared)
	next.FormerCopies = report.Keep
	var previous *gardencorev1beta1.Condition
	var mergeErr error
	err = extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		changed, merr := MergeProviderStatus(bb, func(ps *ProviderStatus) {
			ps.Copy, ps.CopySecretVersion, ps.FormerCopies = next.Copy, next.CopySecretVersion, next.FormerCopies
		})
		if mergeErr = merr; merr != nil {
			return false
		}
		previous = v1beta1helper.GetCondition(bb.Status.Conditions, ConditionFormerCopyBucketsEmpty)
		switch c := report.Condition; {
		case c == nil && previous != nil:
			bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionFormerCopyBucketsEmpty)
			changed = true
		case c != nil && (previous == nil || previous.Status != c.Status || previous.Reason != c.Reason || previous.Message != c.Message):
			bb.Status.Conditions, _ = extstatus.SetCondition(bb.Status.Conditions, ConditionFormerCopyBucketsEmpty, c.Status, c.Reason, c.Message, time.Now())
			changed = true
		}
		return changed
	})
	if err == nil {
		err = mergeErr
	}
	if err != nil {
		return fmt.Errorf("recording the copy bucket in the status: %w", err)
	}
	if c := report.Condition; c != nil && (previous == nil || previous.Message != c.Message) {
		log.Info("Former copy buckets are left", "message", c.Message)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonFormerCopyBucket, "Copy", "%s", extstatus.EventNote(c.Message))
	}
	for _, e := range report.Ended {
		eventType := corev1.EventTypeNormal
		if e.Warning {
			eventType = corev1.EventTypeWarning
		}
		log.Info("Former copy bucket is no longer reported", "bucket", e.Location.Bucket, "note", e.Note)
		a.recorder.Eventf(bb, nil, eventType, ReasonFormerCopyBucketForgotten, "Copy", "%s", extstatus.EventNote(e.Note))
	}
	return nil
}

// lookAtFormer lists one page of a former copy bucket with its own credentials, as its probe
// would (the provider of its type, provider.CopyStore; a probe needs no providerConfig). A type
// this binary writes no copy of any more is unreadable.
func (a *actuator) lookAtFormer(ctx context.Context, l CopyLocation) formerLook {
	store, err := provider.CopyStore(a.provider, l.Type)
	if err != nil {
		return formerLook{Err: err}
	}
	ref := corev1.SecretReference{Namespace: copystore.CredentialsNamespace, Name: copystore.CredentialsPrefix + l.CredentialsRef}
	data, err := connect.NewDataPlane(ctx, a.reader, store, ref, l.Region)
	if err != nil {
		if errors.As(err, new(*secrets.MissingError)) {
			return formerLook{CredentialsGone: true}
		}
		return formerLook{Err: err}
	}
	var look formerLook
	errStop := errors.New("one page is enough")
	err = data.ListObjects(objectstore.WithOperation(ctx, objectstore.OpListObjects), l.Bucket, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page[:min(formerKeysNamed, len(page))] {
			look.First = append(look.First, o.Key)
		}
		return errStop
	})
	switch {
	case errors.Is(err, objectstore.ErrBucketNotFound):
		return formerLook{Gone: true}
	case err != nil && !errors.Is(err, errStop):
		return formerLook{Err: err}
	case len(look.First) == 0:
		return formerLook{Empty: true}
	}
	return look
}
