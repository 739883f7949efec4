// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ReasonLiveBackupsKept is the event reason of a source- entry's deletion refused because the
// live entry still uses the objects under the prefix both share.
const ReasonLiveBackupsKept = "LiveBackupsKept"

// liveWriteSkew is how much later than a source- entry's creation (the API server's clock) an
// object's write time (the store's clock) must be before the guard takes it for a live writer's.
// In gardener's flow the source seed's etcd is destroyed before the migration's restore phase
// creates the source entry, so its last snapshot is older than the entry; this only absorbs the
// difference between the two clocks.
const liveWriteSkew = time.Minute

// LiveEntryError reports the refused deletion of a source- entry (a control-plane migration's
// copy source): the objects under its prefix are the live entry's backups. Nothing was deleted.
// It matches objectstore.ErrInvalidConfig (ERR_CONFIGURATION_PROBLEM).
type LiveEntryError struct {
	// Entry is the source- entry, Live the entry whose backups the prefix holds.
	Entry, Live, Bucket, Prefix string
	// OnSeed: BackupEntry Live is on this seed and names the same bucket.
	OnSeed bool
	// Key, written at Written, is an object under Prefix written after Entry was Created (the
	// data-based check, for a live entry on another seed).
	Key              string
	Written, Created time.Time
}

func (e *LiveEntryError) Error() string {
	why := fmt.Sprintf("BackupEntry %q on this seed names the same bucket and still uses them", e.Live)
	if !e.OnSeed {
		why = fmt.Sprintf("%q there was written at %s, after this entry was created at %s: the live BackupEntry %q (on another seed) still writes backups there",
			e.Key, e.Written.UTC().Format(time.RFC3339), e.Created.UTC().Format(time.RFC3339), e.Live)
	}
	return fmt.Sprintf("spec.bucketName: deleting BackupEntry %q would delete the objects under %q in bucket %q, but %s; nothing is deleted and the deletion is retried. "+
		"A control-plane migration's source entry must name the source seed's bucket, which the live entry has left; "+
		"if the migration is over and these backups are the live entry's, end this entry without deleting objects by removing its finalizers %s and %s",
		e.Entry, e.Prefix, e.Bucket, why, entryinfo.FinalizerName, backupentry.FinalizerName)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *LiveEntryError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// liveEntryOf returns the name of the live entry whose prefix a source- entry named name shares,
// and false for any other entry.
func liveEntryOf(name string) (string, bool) {
	return strings.CutPrefix(name, v1beta1constants.BackupSourcePrefix+"-")
}

// guardLiveEntry refuses, with a *LiveEntryError and before anything is deleted, to delete the
// prefix of a source- entry that the live entry still uses: when the live entry is on this seed
// (not being deleted itself) and names the same bucket, or when an object under the prefix (a
// current version: not a delete marker, an older version or a snapshot) was written after the
// source entry was created, which in gardener's flow only a live etcd-backup-restore on another
// seed does. prefix is the entry's (Locate); secretRef holds the credentials the deletion uses, which list the prefix. It deletes
// nothing and answers nil for every other entry. It costs a source- entry one read of the live
// entry and one more listing of the prefix per deletion attempt (stopped at the first newer
// object); no other entry pays anything.
func (d *delegate) guardLiveEntry(ctx context.Context, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix, secretRef corev1.SecretReference) error {
	live, ok := liveEntryOf(be.Name)
	if !ok || be.Spec.BucketName == "" {
		return nil // not a source- entry; or no bucket, which the deletion itself refuses
	}
	refused := &LiveEntryError{Entry: be.Name, Live: live, Bucket: be.Spec.BucketName, Prefix: prefix.String(), Created: be.CreationTimestamp.Time}
	other := &extensionsv1alpha1.BackupEntry{}
	switch err := d.reader.Get(ctx, client.ObjectKey{Name: live}, other); {
	case err == nil:
		if other.DeletionTimestamp == nil && other.Spec.BucketName == be.Spec.BucketName {
			refused.OnSeed = true
			return refused
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading BackupEntry %q, whose backups the prefix %q holds: %w", live, prefix.String(), err)
	}
	if be.CreationTimestamp.IsZero() {
		return nil // no creation time (never from an API server): nothing to compare with
	}
	data, err := connect.NewDataPlane(ctx, d.reader, d.provider, secretRef, be.Spec.Region)
	if err != nil {
		return err
	}
	since := be.CreationTimestamp.Add(liveWriteSkew)
	errFound := errors.New("written after the entry was created")
	err = data.ListObjects(objectstore.WithOperation(ctx, objectstore.OpListObjects), be.Spec.BucketName, prefix.String(), func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if !o.Noncurrent && o.Modified.After(since) {
				refused.Key, refused.Written = o.Key, o.Modified
				return errFound
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errFound):
		return refused
	case errors.Is(err, objectstore.ErrBucketNotFound):
		return nil // nothing to delete, nothing to keep
	case err != nil:
		return fmt.Errorf("looking for objects written under %q in bucket %q since the entry was created: %w", prefix.String(), be.Spec.BucketName, err)
	}
	return nil
}

// refuseIfLive runs guardLiveEntry and reports a refusal with a warning event on the entry.
func (d *delegate) refuseIfLive(ctx context.Context, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix, secretRef corev1.SecretReference) error {
	err := d.guardLiveEntry(ctx, be, prefix, secretRef)
	if refused := (*LiveEntryError)(nil); errors.As(err, &refused) {
		d.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonLiveBackupsKept, "Delete", "%v", refused)
	}
	return err
}
