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

// ensureImmutability converges the container's time-based immutability policy. A locked policy
// can only be extended: a declaration that would shorten, unlock or remove it is refused and
// nothing is changed.
func (s *armStore) ensureImmutability(ctx context.Context, rg, account, container string, cfg *azureapi.BackupBucketConfig) error {
	var want *azureapi.ImmutableConfig
	if cfg != nil {
		want = cfg.Immutability
	}
	got, err := s.containers.GetImmutabilityPolicy(ctx, rg, account, container, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the immutability policy of container %q: %w", container, classify(err))
	}
	var days int32
	locked := false
	etag := ""
	if err == nil && got.Properties != nil && got.Properties.ImmutabilityPeriodSinceCreationInDays != nil {
		days = *got.Properties.ImmutabilityPeriodSinceCreationInDays
		locked = got.Properties.State != nil && *got.Properties.State == armstorage.ImmutabilityPolicyStateLocked
		etag = deref(got.Etag)
	}
	field := "providerConfig.immutability"
	if want == nil {
		switch {
		case days == 0:
			return nil
		case locked:
			return objectstore.Invalidf("%s is not declared, but container %q has a locked immutability policy of %d days, which can never be removed: declare it", field, container, days)
		}
		if _, err := s.containers.DeleteImmutabilityPolicy(ctx, rg, account, container, etag, nil); err != nil {
			return fmt.Errorf("removing the immutability policy of container %q: %w", container, classify(err))
		}
		return nil
	}
	wantDays := int32(want.RetentionPeriod.Duration / (24 * time.Hour))
	if locked {
		switch {
		case !want.Locked:
			return objectstore.Invalidf("%s.locked is false, but the policy of container %q is locked and cannot be unlocked", field, container)
		case wantDays < days:
			return objectstore.Invalidf("%s.retentionPeriod is %d days, but the locked policy of container %q keeps blobs %d days and can only be extended", field, wantDays, container, days)
		case wantDays > days:
			_, err := s.containers.ExtendImmutabilityPolicy(ctx, rg, account, container, etag, &armstorage.BlobContainersClientExtendImmutabilityPolicyOptions{
				Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr(wantDays)}},
			})
			if err != nil {
				return fmt.Errorf("extending the immutability policy of container %q: %w", container, classify(err))
			}
		}
		return nil
	}
	if days != wantDays {
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
	}
	if want.Locked {
		if _, err := s.containers.LockImmutabilityPolicy(ctx, rg, account, container, etag, nil); err != nil {
			return fmt.Errorf("locking the immutability policy of container %q: %w", container, classify(err))
		}
	}
	return nil
}

// ensureSoftDelete converges the account's blob and container soft delete when declared.
func (s *armStore) ensureSoftDelete(ctx context.Context, rg, account string, cfg *azureapi.BackupBucketConfig) error {
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
	_, err = s.services.SetServiceProperties(ctx, rg, account, armstorage.BlobServiceProperties{BlobServiceProperties: &armstorage.BlobServicePropertiesProperties{
		DeleteRetentionPolicy:          policy(sd.BlobRetentionDays),
		ContainerDeleteRetentionPolicy: policy(sd.ContainerRetentionDays),
	}}, nil)
	if err != nil {
		return fmt.Errorf("setting soft delete of account %q: %w", account, classify(err))
	}
	return nil
}
