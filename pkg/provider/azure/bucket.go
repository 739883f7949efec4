// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// EnsureBucket implements objectstore.Management: the container exists and is private (public access
// is removed on every reconcile). The account's region is the account's: a container has none.
func (s *keyManagement) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	return s.reconcile(ctx, b, applying())
}

// reconcile is EnsureBucket (log.apply) or PlanBucket.
func (s *keyManagement) reconcile(ctx context.Context, b objectstore.Bucket, log *changeLog) error {
	if err := azureapi.ValidateBucketName(b.Name); err != nil {
		return err
	}
	if err := accountKeyOnly(s.config); err != nil {
		return err
	}
	c, err := s.container(ctx, b.Name)
	if err != nil {
		return err
	}
	// Read first: a reconcile of an existing container (every rotation and spec change of a
	// seed's bucket) then sends no write at all.
	props, err := c.GetProperties(ctx, nil)
	if errorCode(err) == "ContainerNotFound" {
		return log.add(objectstore.BucketChange{Setting: "container", Action: objectstore.ChangeCreate, Detail: "private"}, func() error {
			_, err := c.Create(ctx, nil)
			switch {
			case err == nil, errorCode(err) == "ContainerAlreadyExists":
				return nil
			case errorCode(err) == "ContainerBeingDeleted":
				return fmt.Errorf("container %q is still being deleted; creating it again later: %w", b.Name, err)
			}
			return fmt.Errorf("creating container %q: %w", b.Name, s.classify(err))
		})
	}
	if err != nil {
		return fmt.Errorf("reading container %q: %w", b.Name, s.classify(err))
	}
	if props.BlobPublicAccess != nil && *props.BlobPublicAccess != "" {
		// Setting the access policy without an access level makes the container private; the
		// stored access policies (of others: this extension has none) are kept.
		return log.add(objectstore.BucketChange{Setting: "container public access", Action: objectstore.ChangeUpdate, Detail: string(*props.BlobPublicAccess) + " -> none"}, func() error {
			policy, err := c.GetAccessPolicy(ctx, nil)
			if err != nil {
				return fmt.Errorf("reading the stored access policies of container %q: %w", b.Name, s.classify(err))
			}
			if _, err := c.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: policy.SignedIdentifiers}); err != nil {
				return fmt.Errorf("making container %q private: %w", b.Name, s.classify(err))
			}
			return nil
		})
	}
	return nil
}

// DeleteBucket implements objectstore.Management. Azure deletes a container with everything in it,
// so emptiness is checked first: the engine, not the service, decides what may go.
func (s *keyManagement) DeleteBucket(ctx context.Context, name string) error {
	if err := azureapi.ValidateBucketName(name); err != nil {
		return err
	}
	empty := true
	err := s.ListObjects(ctx, name, "", func(page []objectstore.ObjectVersion) error {
		empty = len(page) == 0
		return errStop
	})
	switch {
	case errors.Is(err, objectstore.ErrBucketNotFound):
		return nil
	case err != nil && !errors.Is(err, errStop):
		return err
	case !empty:
		return fmt.Errorf("container %q: %w", name, objectstore.ErrBucketNotEmpty)
	}
	c, err := s.container(ctx, name)
	if err != nil {
		return err
	}
	_, err = c.Delete(ctx, nil)
	if err == nil || errorCode(err) == "ContainerNotFound" || errorCode(err) == "ContainerBeingDeleted" {
		return nil
	}
	return fmt.Errorf("deleting container %q: %w", name, s.classify(err))
}

var errStop = errors.New("stop listing")

// EnsureBucket implements objectstore.Management: resource group, storage account (StorageV2, HTTPS
// only, TLS 1.2, no public blob access, the declared redundancy), private container, its
// immutability policy and the deferred-deletion lifecycle rule, each converged; the rule is read
// back and the verification recorded in the container's metadata for entries that hold only the
// account key (see deferralRecord).
func (s *armStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	return s.reconcile(ctx, b, applying())
}

// reconcile is EnsureBucket (log.apply) or PlanBucket.
func (s *armStore) reconcile(ctx context.Context, b objectstore.Bucket, log *changeLog) error {
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
	if err := s.ensureGroup(ctx, rg, b.Name, region, log); err != nil {
		return err
	}
	acct, err := s.ensureAccount(ctx, rg, name, b.Name, region, cfg.SKU(), cfg, log)
	if err != nil || acct.Name == nil {
		return err // or a plan of an account that is not there yet
	}
	name = deref(acct.Name)
	if err := s.ensureContainer(ctx, rg, name, b.Name, log); err != nil {
		return err
	}
	if err := s.ensureImmutability(ctx, rg, name, b.Name, cfg, log); err != nil {
		return err
	}
	if err := s.ensureSoftDelete(ctx, rg, name, cfg, log); err != nil {
		return err
	}
	if cfg != nil && cfg.HandBack {
		return s.handBack(ctx, b.Name, rg, acct, log)
	}
	if adopted(acct) {
		// The incumbent's deferrals: its rule stays (or is put back) while the account is ours.
		if err := s.keepIncumbentRule(ctx, rg, name, log); err != nil {
			return err
		}
	}
	return s.ensureRuleAndRecord(ctx, b.Name, rg, name, log)
}

func (s *armStore) ensureGroup(ctx context.Context, rg, bucket, region string, log *changeLog) error {
	_, err := s.groups.Get(ctx, rg, nil)
	if err == nil {
		return nil // an existing group is used as it is; it is deleted only if tagged ours
	}
	if !isNotFound(err) {
		return fmt.Errorf("reading resource group %q: %w", rg, classify(err))
	}
	return log.add(objectstore.BucketChange{Setting: "resource group " + rg, Action: objectstore.ChangeCreate, Detail: "in " + region}, func() error {
		if _, err := s.groups.CreateOrUpdate(ctx, rg, armresources.ResourceGroup{Location: to.Ptr(region), Tags: tagsFor(bucket)}, nil); err != nil {
			return fmt.Errorf("creating resource group %q: %w", rg, classify(err))
		}
		return nil
	})
}

func (s *armStore) ensureContainer(ctx context.Context, rg, account, name string, log *changeLog) error {
	got, err := s.containers.Get(ctx, rg, account, name, nil)
	switch {
	case err == nil:
		if p := got.ContainerProperties; p != nil && p.PublicAccess != nil && *p.PublicAccess != armstorage.PublicAccessNone {
			return log.add(objectstore.BucketChange{Setting: "container public access", Action: objectstore.ChangeUpdate, Detail: string(*p.PublicAccess) + " -> None"}, func() error {
				_, err := s.containers.Update(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
				if err != nil {
					return fmt.Errorf("making container %q private: %w", name, classify(err))
				}
				return nil
			})
		}
		return nil
	case !isNotFound(err):
		return fmt.Errorf("reading container %q: %w", name, classify(err))
	}
	return log.add(objectstore.BucketChange{Setting: "container", Action: objectstore.ChangeCreate, Detail: "private"}, func() error {
		_, err := s.containers.Create(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
		if err != nil {
			return fmt.Errorf("creating container %q: %w", name, classify(err))
		}
		return nil
	})
}

// DeleteBucket implements objectstore.Management: an empty bucket's storage account and then its
// resource group, each only if this extension created it for the bucket, the account only when
// it holds no container but the bucket's and the group only when nothing else is left in it.
// An account that is not ours is an ownership error and is not touched. An account of ours that
// holds other containers loses only the bucket's (empty) container and stays, with an ownership
// error naming them: somebody else's data is never deleted with it.
func (s *armStore) DeleteBucket(ctx context.Context, bucket string) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	rg := ResourceGroupName(bucket)
	acct, err := s.ownAccount(ctx, bucket)
	switch {
	case err == nil:
		if err := s.deleteAccount(ctx, rg, deref(acct.Name), bucket); err != nil {
			return err
		}
	case !errors.Is(err, objectstore.ErrBucketNotFound):
		return err
	}
	return s.deleteGroup(ctx, rg, bucket)
}

// deleteAccount deletes bucket's account of ours once its container is empty and no other
// container lives in it.
func (s *armStore) deleteAccount(ctx context.Context, rg, name, bucket string) error {
	empty, err := s.isEmpty(ctx, bucket)
	if err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("container %q: %w", bucket, objectstore.ErrBucketNotEmpty)
	}
	others, err := s.otherContainers(ctx, rg, name, bucket)
	if err != nil {
		return err
	}
	if len(others) > 0 {
		if _, err := s.containers.Delete(ctx, rg, name, bucket, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting container %q: %w", bucket, classify(err))
		}
		return fmt.Errorf("%w: storage account %q holds containers the bucket did not make (%s): the bucket's empty container %q is deleted, the account is left in place with them; move or delete them, or delete the account yourself, and the deletion completes",
			objectstore.ErrOwnedByOther, name, strings.Join(others, ", "), bucket)
	}
	if _, err := s.accounts.Delete(ctx, rg, name, nil); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting storage account %q: %w", name, classify(err))
	}
	return nil
}

// otherContainers lists the account's containers other than the bucket's (the management
// plane's view: every container, whoever made it).
func (s *armStore) otherContainers(ctx context.Context, rg, name, bucket string) ([]string, error) {
	var others []string
	pager := s.containers.NewListPager(rg, name, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the containers of storage account %q: %w", name, classify(err))
		}
		for _, c := range page.Value {
			if n := deref(c.Name); n != bucket {
				others = append(others, n)
			}
		}
	}
	return others, nil
}

// deleteGroup deletes bucket's resource group if this extension created it and nothing is left
// in it.
func (s *armStore) deleteGroup(ctx context.Context, rg, bucket string) error {
	group, err := s.groups.Get(ctx, rg, nil)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading resource group %q: %w", rg, classify(err))
	case !ours(group.Tags, bucket):
		return nil // a group the extension did not create is used, never deleted
	}
	pager := s.resources.NewListByResourceGroupPager(rg, &armresources.ClientListByResourceGroupOptions{Top: to.Ptr[int32](1)})
	if pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing resource group %q: %w", rg, classify(err))
		}
		if len(page.Value) > 0 {
			return nil // something else lives in the group: it stays
		}
	}
	poller, err := s.groups.BeginDelete(ctx, rg, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 2 * time.Second})
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting resource group %q: %w", rg, classify(err))
	}
	return nil
}

// isEmpty reports whether the bucket's container holds no blob version or snapshot at all.
func (s *armStore) isEmpty(ctx context.Context, bucket string) (bool, error) {
	errStop := errors.New("stop")
	err := s.blobs.ListObjects(ctx, bucket, "", func(page []objectstore.ObjectVersion) error {
		if len(page) > 0 {
			return errStop
		}
		return nil
	})
	switch {
	case errors.Is(err, errStop):
		return false, nil
	case err == nil, errors.Is(err, objectstore.ErrBucketNotFound):
		return true, nil
	}
	return false, err
}
