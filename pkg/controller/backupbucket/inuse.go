// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ReasonBucketInUse is the event reason of a bucket deletion refused because BackupEntries on
// the seed still name the bucket.
const ReasonBucketInUse = "BucketInUse"

const (
	// inUseNamed is how many of the entries that still name a bucket its refusal names.
	inUseNamed = 5
	// entryListPage bounds one page of the listing of the seed's BackupEntries.
	entryListPage = 500
)

// InUseError reports a bucket whose deletion was refused, before anything was deleted, because
// BackupEntries on the seed still name it in spec.bucketName: emptying the bucket would delete
// their backups. It matches objectstore.ErrInvalidConfig (ERR_CONFIGURATION_PROBLEM).
type InUseError struct {
	Bucket string
	// Count is how many entries name the bucket, First a few of their names (sorted as listed).
	Count int
	First []string
}

func (e *InUseError) Error() string {
	more := ""
	if e.Count > len(e.First) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.First))
	}
	return fmt.Sprintf("BackupBucket %q is not deleted: %d BackupEntries on this seed still name it in spec.bucketName (%s%s), and emptying the bucket would delete their backups; "+
		"nothing is deleted and the deletion is retried until they are gone. Delete those BackupEntries first (gardener deletes a bucket only after its entries)",
		e.Bucket, e.Count, strings.Join(e.First, ", "), more)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *InUseError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// entriesNaming returns a *InUseError when any BackupEntry on the seed names bucket in
// spec.bucketName, whatever its type or class, and also while it is being deleted: its own
// deletion still needs the bucket. It reads the API server (not a cache), in pages.
func entriesNaming(ctx context.Context, reader client.Reader, bucket string) error {
	inUse := &InUseError{Bucket: bucket}
	err := eachEntryOf(ctx, reader, bucket, func(be *extensionsv1alpha1.BackupEntry) error {
		inUse.Count++
		if len(inUse.First) < inUseNamed {
			inUse.First = append(inUse.First, be.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if inUse.Count > 0 {
		return inUse
	}
	return nil
}

// eachEntryOf calls fn with every BackupEntry on the seed that names bucket in spec.bucketName,
// whatever its type, class or deletion, as listed from the API server (not a cache) in pages. An
// error of fn ends the listing and is returned.
func eachEntryOf(ctx context.Context, reader client.Reader, bucket string, fn func(*extensionsv1alpha1.BackupEntry) error) error {
	list := &extensionsv1alpha1.BackupEntryList{}
	opts := []client.ListOption{client.Limit(entryListPage)}
	for {
		if err := reader.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing the seed's BackupEntries that may name bucket %q: %w", bucket, err)
		}
		for i := range list.Items {
			if list.Items[i].Spec.BucketName != bucket {
				continue
			}
			if err := fn(&list.Items[i]); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			return nil
		}
		opts = []client.ListOption{client.Limit(entryListPage), client.Continue(list.Continue)}
	}
}

// refuseIfInUse refuses the deletion of bb while BackupEntries name it (entriesNaming) and
// reports a refusal with a warning event on the bucket.
func (a *actuator) refuseIfInUse(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) error {
	err := entriesNaming(ctx, a.reader, bb.Name)
	if inUse := (*InUseError)(nil); errors.As(err, &inUse) {
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonBucketInUse, "Delete", "%v", inUse)
	}
	return err
}
