// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DeferDeletion implements objectstore.Management on an account of ours: the rule is converged, then
// read back and checked (present, enabled, scoped by the tag alone, deleting base blobs,
// versions and snapshots), and only then is every base blob, previous version and snapshot under
// prefix tagged for it. A rule that does not read back as needed is ErrUnsupported, and nothing
// is tagged.
func (s *armStore) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	acct, err := s.ownAccount(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	rg, name := ResourceGroupName(bucket), deref(acct.Name)
	if err := s.ensureDeferredDeletionRule(ctx, rg, name, applying()); err != nil {
		return objectstore.Deferral{}, err
	}
	rules, i, err := s.readRule(ctx, rg, name)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	var got *armstorage.ManagementPolicyRule
	if i >= 0 {
		got = rules[i]
	}
	if why := ruleMismatch(got); why != "" {
		return objectstore.Deferral{}, fmt.Errorf("%w: lifecycle rule %q on storage account %q does not read back as written: %s; the locked blobs are not handed to it",
			objectstore.ErrUnsupported, DeferredDeletionRule, name, why)
	}
	if err := s.blobs.markForDeferral(ctx, bucket, prefix); err != nil {
		return objectstore.Deferral{}, err
	}
	return objectstore.Deferral{Rule: fmt.Sprintf("lifecycle rule %s on storage account %s", DeferredDeletionRule, name)}, nil
}

// DeferDeletion implements objectstore.Management for an account reached with its key: the lifecycle
// rule lives in the account's management policy, which an account key cannot read, so the
// verification is the bucket's reconcile's, which records it in the container's metadata (see
// deferralRecord). The deferral is accepted only when that record names the rule that deletes
// what is tagged here (the tag alone as filter; base blobs, versions and snapshots): then every
// version and snapshot under prefix is tagged and the Deferral says who verified the rule, and
// when. Without such a record nothing is tagged and nothing claimed (ErrUnsupported; the caller
// retries until the locks end).
func (s *keyManagement) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	rec, err := s.readRecord(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	if why := rec.covers(); why != "" {
		return objectstore.Deferral{}, fmt.Errorf("%w: deferring deletions to the storage account's lifecycle rule %q needs the rule read back, which an account key cannot do (the management plane needs a service principal or workload identity), and %s; the BackupBucket's reconcile records it in container %q once it has read the rule back (reconcile the BackupBucket on its seed), or the BackupBucket's credentials are used where it is on the entry's seed; otherwise the deletion is retried until the retention locks expire",
			objectstore.ErrUnsupported, DeferredDeletionRule, why, bucket)
	}
	if err := s.markForDeferral(ctx, bucket, prefix); err != nil {
		return objectstore.Deferral{}, err
	}
	a, err := s.reach(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	return objectstore.Deferral{
		Rule:       fmt.Sprintf("lifecycle rule %s on storage account %s", DeferredDeletionRule, a.name),
		VerifiedBy: "the BackupBucket's reconcile at " + rec.verified.UTC().Format(time.RFC3339) + " (recorded in the container's metadata; an account key cannot read the rule)",
	}, nil
}

// markForDeferral gives every base blob, previous version and snapshot under prefix the tag the
// rule deletes by, and gardener-extension-provider-azure's marker (IncumbentTag), which its rule
// deletes base blobs by after a hand-back, keeping their other tags (those already tagged are skipped, so an interrupted
// pass resumes).
func (s *store) markForDeferral(ctx context.Context, bucket, prefix string) error {
	opts := &container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Tags: true, Versions: true, Snapshots: true}, MaxResults: to.Ptr(s.pageSize)}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	pager := c.NewListBlobsFlatPager(opts)
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return classify(err)
		}
		// Keyed by what names a version: an ObjectVersion carries times too, not a map key.
		type versionKey struct{ key, version string }
		tags := map[versionKey]map[string]string{}
		var todo []objectstore.ObjectVersion
		for _, it := range resp.Segment.BlobItems {
			have := map[string]string{}
			if it.BlobTags != nil {
				for _, t := range it.BlobTags.BlobTagSet {
					have[deref(t.Key)] = deref(t.Value)
				}
			}
			if have[DeferredDeletionTag] == "true" && have[IncumbentTag] == "true" {
				continue
			}
			have[DeferredDeletionTag] = "true"
			// provider-azure's marker too: after a hand-back its own rule deletes the base blobs.
			have[IncumbentTag] = "true"
			o := listed(it)
			tags[versionKey{o.Key, o.Version}] = have
			todo = append(todo, o)
		}
		failed := objectstore.ForEachObject(ctx, todo, 16, func(ctx context.Context, o objectstore.ObjectVersion) error {
			b, err := s.blobAt(ctx, bucket, o)
			if err != nil {
				return err
			}
			_, err = b.SetTags(ctx, tags[versionKey{o.Key, o.Version}], nil)
			return classify(err)
		})
		if len(failed) > 0 {
			return fmt.Errorf("tagging %d blob versions for deferred deletion, first %q %s: %w", len(failed), failed[0].Object.Key, failed[0].Object.Version, failed[0].Err)
		}
	}
	return nil
}
