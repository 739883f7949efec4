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

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DeleteBucket implements objectstore.Store: an empty bucket's storage account and then its
// resource group, each only if this extension created it for the bucket, the account only when
// it holds no container but the bucket's and the group only when nothing else is left in it.
// An account that is not ours is an ownership error and is not touched. An account of ours that
// holds other containers loses only the bucket's (empty) container and stays, with an ownership
// error naming them: somebody else's data is never deleted with it.
func (s *armStore) DeleteBucket(ctx context.Context, bucket string) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	rg, name := ResourceGroupName(bucket), AccountName(bucket)
	_, err := s.ownAccount(ctx, bucket)
	switch {
	case err == nil:
		if err := s.deleteAccount(ctx, rg, name, bucket); err != nil {
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
	err := s.ListObjects(ctx, bucket, "", func(page []objectstore.ObjectVersion) error {
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
