package azure

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// armStore is a bucket reached through the Azure Resource Manager with a service principal or a
// workload identity: it creates and converges the resource group, the storage account and the
// container, and reaches the blobs with the account's key, fetched per request.
type armStore struct {
	accounts   *armstorage.AccountsClient
	containers *armstorage.BlobContainersClient
	services   *armstorage.BlobServicesClient
	policies   *armstorage.ManagementPoliciesClient
	groups     *armresources.ResourceGroupsClient
	resources  *armresources.Client
	region     string
	// config is the bucket's providerConfig (nil: the defaults).
	config *azureapi.BackupBucketConfig
	// newData builds the data-plane store from an account's name, key and endpoint.
	newData func(account) (*store, error)

	mu   sync.Mutex
	data map[string]*store // by bucket, for this request only
}

var _ objectstore.Store = (*armStore)(nil)

func newARMStore(sub string, cred azcore.TokenCredential, opts *arm.ClientOptions, region string, cfg *azureapi.BackupBucketConfig, newData func(account) (*store, error)) (*armStore, error) {
	factory, err := armstorage.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, objectstore.Invalidf("%w", err)
	}
	resources, err := armresources.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, objectstore.Invalidf("%w", err)
	}
	return &armStore{
		accounts:   factory.NewAccountsClient(),
		containers: factory.NewBlobContainersClient(),
		services:   factory.NewBlobServicesClient(),
		policies:   factory.NewManagementPoliciesClient(),
		groups:     resources.NewResourceGroupsClient(),
		resources:  resources.NewClient(),
		region:     region,
		config:     cfg,
		newData:    newData,
		data:       map[string]*store{},
	}, nil
}

// MaxDeleteBatch implements objectstore.Store.
func (s *armStore) MaxDeleteBatch() int { return maxDeleteBatch }

// EnsureBucket implements objectstore.Store: resource group, storage account (StorageV2, HTTPS
// only, TLS 1.2, no public blob access, the declared redundancy), private container, its
// immutability policy and the deferred-deletion lifecycle rule, each converged.
func (s *armStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if err := azureapi.ValidateBucketName(b.Name); err != nil {
		return err
	}
	cfg := s.config
	rg, name := ResourceGroupName(b.Name), AccountName(b.Name)
	region := b.Region
	if region == "" {
		region = s.region
	}
	if region == "" {
		return objectstore.Invalidf("spec.region is empty: the storage account of bucket %q needs a location", b.Name)
	}
	if err := s.ensureGroup(ctx, rg, b.Name, region); err != nil {
		return err
	}
	if err := s.ensureAccount(ctx, rg, name, b.Name, region, cfg.SKU()); err != nil {
		return err
	}
	if err := s.ensureContainer(ctx, rg, name, b.Name); err != nil {
		return err
	}
	if err := s.ensureImmutability(ctx, rg, name, b.Name, cfg); err != nil {
		return err
	}
	if err := s.ensureSoftDelete(ctx, rg, name, cfg); err != nil {
		return err
	}
	return s.ensureDeferredDeletionRule(ctx, rg, name)
}

func (s *armStore) ensureGroup(ctx context.Context, rg, bucket, region string) error {
	_, err := s.groups.Get(ctx, rg, nil)
	if err == nil {
		return nil // an existing group is used as it is; it is deleted only if tagged ours
	}
	if !isNotFound(err) {
		return fmt.Errorf("reading resource group %q: %w", rg, classify(err))
	}
	if _, err := s.groups.CreateOrUpdate(ctx, rg, armresources.ResourceGroup{Location: to.Ptr(region), Tags: tagsFor(bucket)}, nil); err != nil {
		return fmt.Errorf("creating resource group %q: %w", rg, classify(err))
	}
	return nil
}

func (s *armStore) ensureContainer(ctx context.Context, rg, account, name string) error {
	got, err := s.containers.Get(ctx, rg, account, name, nil)
	switch {
	case err == nil:
		if p := got.ContainerProperties; p != nil && p.PublicAccess != nil && *p.PublicAccess != armstorage.PublicAccessNone {
			_, err := s.containers.Update(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
			if err != nil {
				return fmt.Errorf("making container %q private: %w", name, classify(err))
			}
		}
		return nil
	case !isNotFound(err):
		return fmt.Errorf("reading container %q: %w", name, classify(err))
	}
	_, err = s.containers.Create(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
	if err != nil {
		return fmt.Errorf("creating container %q: %w", name, classify(err))
	}
	return nil
}

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

// isNotFound is true for a management-plane 404 of any resource.
func isNotFound(err error) bool {
	c := classify(err)
	return errors.Is(c, objectstore.ErrNotFound) || errors.Is(c, objectstore.ErrBucketNotFound)
}
