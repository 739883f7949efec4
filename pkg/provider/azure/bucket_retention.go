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

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// immutability is a container's time-based immutability policy as read, and the declared one.
type immutability struct {
	want   *azureapi.ImmutableConfig
	days   int32
	locked bool
	etag   string
}

// readImmutability reads the container's immutability policy and refuses a declaration that
// would shorten, unlock or remove a locked one. It changes nothing, so it may run before anything
// is written (the adoption of the incumbent's account, see ensureAccount).
func (s *armStore) readImmutability(ctx context.Context, rg, account, container string, cfg *azureapi.BackupBucketConfig) (immutability, error) {
	var im immutability
	if cfg != nil {
		im.want = cfg.Immutability
	}
	got, err := s.containers.GetImmutabilityPolicy(ctx, rg, account, container, nil)
	if err != nil && !isNotFound(err) {
		return im, fmt.Errorf("reading the immutability policy of container %q: %w", container, classify(err))
	}
	if err == nil && got.Properties != nil && got.Properties.ImmutabilityPeriodSinceCreationInDays != nil {
		im.days = *got.Properties.ImmutabilityPeriodSinceCreationInDays
		im.locked = got.Properties.State != nil && *got.Properties.State == armstorage.ImmutabilityPolicyStateLocked
		im.etag = deref(got.Etag)
	}
	if !im.locked {
		return im, nil
	}
	const field = "providerConfig.immutability"
	switch {
	case im.want == nil:
		return im, objectstore.Invalidf("%s is not declared, but container %q has a locked immutability policy of %d days, which can never be removed: declare it", field, container, im.days)
	case !im.want.Locked:
		return im, objectstore.Invalidf("%s.locked is false, but the policy of container %q is locked and cannot be unlocked", field, container)
	case im.wantDays() < im.days:
		return im, objectstore.Invalidf("%s.retentionPeriod is %d days, but the locked policy of container %q keeps blobs %d days and can only be extended", field, im.wantDays(), container, im.days)
	}
	return im, nil
}

func (im immutability) wantDays() int32 {
	return int32(im.want.RetentionPeriod.Duration / (24 * time.Hour))
}

// ensureImmutability converges the container's time-based immutability policy, keeping the
// stricter setting: an unlocked policy longer than declared, or not declared, is kept as it is
// (objectstore.ChangeKeep), never shortened or removed, whoever set it; a lock declared over a
// longer period locks that period. A locked policy can only be extended: a declaration that
// would shorten, unlock or remove it is refused and nothing is changed (readImmutability).
func (s *armStore) ensureImmutability(ctx context.Context, rg, account, container string, cfg *azureapi.BackupBucketConfig, log *changeLog) error {
	im, err := s.readImmutability(ctx, rg, account, container, cfg)
	if err != nil {
		return err
	}
	if im.want == nil {
		if im.days == 0 {
			return nil
		}
		// Stricter than none: kept, whoever set it.
		return log.add(objectstore.BucketChange{Setting: "container immutability policy", Action: objectstore.ChangeKeep,
			Detail: fmt.Sprintf("%d days, unlocked, kept (none declared): a retention is never removed; remove it on the container if it is to go", im.days)}, noWrite)
	}
	wantDays, etag := im.wantDays(), im.etag
	if im.locked {
		if wantDays > im.days {
			return log.add(objectstore.BucketChange{Setting: "container immutability policy", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("locked, extended from %d to %d days", im.days, wantDays)}, func() error {
				_, err := s.containers.ExtendImmutabilityPolicy(ctx, rg, account, container, etag, &armstorage.BlobContainersClientExtendImmutabilityPolicyOptions{
					Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr(wantDays)}},
				})
				if err != nil {
					return fmt.Errorf("extending the immutability policy of container %q: %w", container, classify(err))
				}
				return nil
			})
		}
		return nil
	}
	if im.days > wantDays {
		if err := log.add(objectstore.BucketChange{Setting: "container immutability policy", Action: objectstore.ChangeKeep,
			Detail: fmt.Sprintf("%d days, kept (declared: %d days): a longer retention is never shortened", im.days, wantDays)}, noWrite); err != nil {
			return err
		}
	}
	if im.days < wantDays {
		err := log.add(objectstore.BucketChange{Setting: "container immutability policy", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("%d -> %d days", im.days, wantDays)}, func() error {
			opts := &armstorage.BlobContainersClientCreateOrUpdateImmutabilityPolicyOptions{
				Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr(wantDays)}},
			}
			if etag != "" {
				opts.IfMatch = to.Ptr(etag)
			}
			res, err := s.containers.CreateOrUpdateImmutabilityPolicy(ctx, rg, account, container, opts)
			if err != nil {
				return fmt.Errorf("setting the immutability policy of container %q: %w", container, classify(err))
			}
			etag = deref(res.Etag)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if im.want.Locked {
		return log.add(objectstore.BucketChange{Setting: "container immutability policy lock", Action: objectstore.ChangeCreate, Detail: "locked for good"}, func() error {
			if _, err := s.containers.LockImmutabilityPolicy(ctx, rg, account, container, etag, nil); err != nil {
				return fmt.Errorf("locking the immutability policy of container %q: %w", container, classify(err))
			}
			return nil
		})
	}
	return nil
}

// ensureSoftDelete converges the account's blob and container soft delete when declared.
func (s *armStore) ensureSoftDelete(ctx context.Context, rg, account string, cfg *azureapi.BackupBucketConfig, log *changeLog) error {
	if cfg == nil || cfg.SoftDelete == nil {
		return nil
	}
	policy := func(days int32) *armstorage.DeleteRetentionPolicy {
		if days == 0 {
			return &armstorage.DeleteRetentionPolicy{Enabled: to.Ptr(false)}
		}
		return &armstorage.DeleteRetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(days)}
	}
	same := func(got *armstorage.DeleteRetentionPolicy, days int32) bool {
		if got == nil || !deref(got.Enabled) {
			return days == 0
		}
		return deref(got.Days) == days
	}
	got, err := s.services.GetServiceProperties(ctx, rg, account, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the blob service properties of account %q: %w", account, classify(err))
	}
	var props armstorage.BlobServicePropertiesProperties
	if err == nil && got.BlobServiceProperties.BlobServiceProperties != nil {
		props = *got.BlobServiceProperties.BlobServiceProperties
	}
	sd := cfg.SoftDelete
	if same(props.DeleteRetentionPolicy, sd.BlobRetentionDays) && same(props.ContainerDeleteRetentionPolicy, sd.ContainerRetentionDays) {
		return nil
	}
	return log.add(objectstore.BucketChange{Setting: "soft delete", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("-> blobs %d days, containers %d days", sd.BlobRetentionDays, sd.ContainerRetentionDays)}, func() error {
		_, err := s.services.SetServiceProperties(ctx, rg, account, armstorage.BlobServiceProperties{BlobServiceProperties: &armstorage.BlobServicePropertiesProperties{
			DeleteRetentionPolicy:          policy(sd.BlobRetentionDays),
			ContainerDeleteRetentionPolicy: policy(sd.ContainerRetentionDays),
		}}, nil)
		if err != nil {
			return fmt.Errorf("setting soft delete of account %q: %w", account, classify(err))
		}
		return nil
	})
}

// noWrite is the write of a change that writes nothing (objectstore.ChangeKeep).
func noWrite() error { return nil }
