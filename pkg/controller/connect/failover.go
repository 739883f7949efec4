// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect

import (
	"context"
	"encoding/json"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ServeReasonCopyByPolicy means the BackupBucket recorded an automatic failover (copy.failover):
// etcd-backup names the copy bucket as with copy.serve: copy.
const ServeReasonCopyByPolicy = "CopyByPolicy"

// FailoverRecord is a BackupBucket's record of an automatic failover (copy.failover), in its
// status.providerStatus.failover. The BackupBucket's probe writes it once the primary was
// unavailable for copy.failover.after while the copy was available and converged, and removes it
// only once the operator set copy.serve: copy (adopting the failover): a recorded failover is
// never undone automatically, so the seed's backups never flap between the stores.
type FailoverRecord struct {
	// At is when the failover was recorded.
	At metav1.Time `json:"at"`
	// CopyBucket is the copy bucket failed over to.
	CopyBucket string `json:"copyBucket"`
	// Reason and Message are the primary's BucketAvailable when it was recorded, and Since when
	// it had turned False.
	Reason  string      `json:"reason"`
	Message string      `json:"message"`
	Since   metav1.Time `json:"since"`
}

// Describe says when and why the failover was recorded.
func (r *FailoverRecord) Describe() string {
	return fmt.Sprintf("an automatic failover (copy.failover) was recorded at %s: the primary's BucketAvailable had been False (%s) since %s: %s",
		r.At.UTC().Format("2006-01-02T15:04:05Z"), r.Reason, r.Since.UTC().Format("2006-01-02T15:04:05Z"), r.Message)
}

// FailoverRecordOf reads the failover record of bb (nil: none; an unreadable providerStatus is
// an error: serving the wrong store is worse than failing).
func FailoverRecordOf(bb *extensionsv1alpha1.BackupBucket) (*FailoverRecord, error) {
	if bb.Status.ProviderStatus == nil || len(bb.Status.ProviderStatus.Raw) == 0 {
		return nil, nil
	}
	var ps struct {
		Failover *FailoverRecord `json:"failover,omitempty"`
	}
	if err := json.Unmarshal(bb.Status.ProviderStatus.Raw, &ps); err != nil {
		return nil, fmt.Errorf("reading the failover record of BackupBucket %s: %w", bb.Name, err)
	}
	return ps.Failover, nil
}

// FailoverOf reads the failover record of the BackupBucket named bucket (an entry's
// spec.bucketName); a BackupBucket that is gone has none.
func FailoverOf(ctx context.Context, reader client.Reader, bucket string) (*FailoverRecord, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := reader.Get(ctx, client.ObjectKey{Name: bucket}, bb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading BackupBucket %s for its failover record: %w", bucket, err)
	}
	return FailoverRecordOf(bb)
}

// ServesCopy says whether entries of bucket are served from place's copy by the configuration or
// by a recorded failover (read with reader only when the configuration does not say so).
func ServesCopy(ctx context.Context, reader client.Reader, place *CopyPlace, bucket string) (bool, error) {
	if place == nil {
		return false, nil
	}
	if place.Settings.ServesCopy() {
		return true, nil
	}
	rec, err := FailoverOf(ctx, reader, bucket)
	return rec != nil, err
}

// FailoverConflict is the configuration error (objectstore.ErrInvalidConfig) of a recorded
// failover the seed configuration no longer matches: no copy is declared (declared false), or
// the declared copy bucket is not the record's. nil when there is no record or it matches.
// While it is not nil the record is kept (decideFailover), the BackupBucket fails with it and no
// entry is switched: neither to the primary, which lacks what the shoots wrote into the copy, nor
// to another copy bucket, which lacks it too.
func FailoverConflict(rec *FailoverRecord, declared bool, copyBucket string) error {
	switch {
	case rec == nil:
		return nil
	case !declared:
		return objectstore.Invalidf("copy: was removed while an automatic failover to bucket %q is recorded: declare the copy again and come back with copy.serve: copy then primary", rec.CopyBucket)
	case copyBucket != rec.CopyBucket:
		return objectstore.Invalidf("copy.bucketName: the copy bucket is now %q, but an automatic failover to bucket %q is recorded: entries stay on bucket %q; declare bucket %q again and come back with copy.serve: copy then primary", copyBucket, rec.CopyBucket, rec.CopyBucket, rec.CopyBucket)
	}
	return nil
}
