// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// maxDeleteBatch is Blob Batch's limit of sub-requests per batch.
	maxDeleteBatch = 256
	// maxListPageSize is Azure's largest listing page.
	maxListPageSize = 5000
)

// Object versions are encoded in ObjectVersion.Version with their kind, because a blob snapshot,
// a previous version and the current version are deleted differently. A blob written without
// versioning has no version ID and an empty Version.
const (
	snapshotPrefix = "snapshot:"
	versionPrefix  = "version:"
	// currentPrefix marks the current version of a blob on an account with versioning: Azure
	// refuses to delete the current version by its ID (OperationNotAllowedOnRootBlob), and
	// deleting the base blob keeps it as a previous version under the same ID while versioning
	// is on, so both are deleted (see DeleteObjects).
	currentPrefix = "current:"
)

// store is the blob data plane of one request (and the Writer of the tests).
type store struct {
	// reach returns the storage account that holds bucket's container: the secret's one account
	// for an account-key secret; for a service principal or a workload identity the bucket's own
	// account, reached with its key (armStore.reachAccount: fetched once per request, and only
	// from an account that is ours).
	reach func(ctx context.Context, bucket string) (blobAccount, error)
	// pageSize is the most entries one listing page asks for.
	pageSize int32
	// secretKeys, for a store built from an account-key secret, names the secret's keys that
	// a refused request is about (empty for a data plane reached with a key from listKeys).
	secretKeys string
}

// blobAccount is one storage account's blob endpoint.
type blobAccount struct {
	client *azblob.Client
	// name is the storage account's name.
	name string
}

// keyManagement is the management plane of an account-key secret: containers in its one account.
type keyManagement struct {
	*store

	// config is the bucket's providerConfig (never nil).
	config *azureapi.BackupBucketConfig
}

var (
	_ objectstore.DataPlane  = (*store)(nil)
	_ objectstore.Writer     = (*store)(nil)
	_ objectstore.Management = (*keyManagement)(nil)
	_ objectstore.Management = (*armStore)(nil)
)

// MaxDeleteBatch implements objectstore.DataPlane.
func (s *store) MaxDeleteBatch() int { return maxDeleteBatch }

// container is the client of bucket's container in the account that holds it.
func (s *store) container(ctx context.Context, bucket string) (*container.Client, error) {
	a, err := s.reach(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return a.client.ServiceClient().NewContainerClient(bucket), nil
}

// ListObjects implements objectstore.DataPlane: every blob with its snapshots and versions, the
// previous versions of deleted blobs included.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	opts := &container.ListBlobsFlatOptions{
		// ImmutabilityPolicy: a version-level immutability policy's expiry comes with the entry.
		// Tags: etcd-backup-restore's exclude mark (see snapshotRule).
		Include:    container.ListBlobsInclude{Snapshots: true, Versions: true, ImmutabilityPolicy: true, Tags: true},
		MaxResults: to.Ptr(s.pageSize),
	}
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
			return fmt.Errorf("listing container %q: %w", bucket, s.classify(err))
		}
		page := make([]objectstore.ObjectVersion, 0, len(resp.Segment.BlobItems))
		for _, it := range resp.Segment.BlobItems {
			page = append(page, listed(it))
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
	}
	return nil
}

// listed names one entry of a listing with its kind (see currentPrefix) and what the listing
// tells of it. A snapshot and a previous version are noncurrent; a blob without a version ID
// (versioning off) is the current blob.
func listed(it *container.BlobItem) objectstore.ObjectVersion {
	o := objectstore.ObjectVersion{Key: deref(it.Name), ExcludeMark: excludeMarked(it)}
	switch {
	case deref(it.Snapshot) != "":
		o.Version = snapshotPrefix + *it.Snapshot
		o.Noncurrent = true
		o.BlobSnapshot = true
	case deref(it.VersionID) != "" && deref(it.IsCurrentVersion):
		o.Version = currentPrefix + *it.VersionID
	case deref(it.VersionID) != "":
		o.Version = versionPrefix + *it.VersionID
		o.Noncurrent = true
	}
	if p := it.Properties; p != nil {
		o.Size = deref(p.ContentLength)
		o.Modified = deref(p.LastModified)
		o.ETag = string(deref(p.ETag))
		// Only a version-level policy is listed; a container's policy (time-based retention of
		// the container) is not, and is left zero here.
		o.RetainUntil = deref(p.ImmutabilityPolicyExpiresOn)
	}
	return o
}

// blobAt is the client of one listed entry: a snapshot, a previous version, or the blob.
func (s *store) blobAt(ctx context.Context, bucket string, o objectstore.ObjectVersion) (*blob.Client, error) {
	c, err := s.container(ctx, bucket)
	if err != nil {
		return nil, err
	}
	b := c.NewBlobClient(o.Key)
	switch {
	case strings.HasPrefix(o.Version, snapshotPrefix):
		return b.WithSnapshot(strings.TrimPrefix(o.Version, snapshotPrefix))
	case strings.HasPrefix(o.Version, versionPrefix):
		return b.WithVersionID(strings.TrimPrefix(o.Version, versionPrefix))
	}
	return b, nil
}

// DeleteObjects implements objectstore.DataPlane with Blob Batch requests of up to 256 deletes: a
// snapshot or previous version by its ID, a base blob with its snapshots. A current version
// (versioning on) is deleted as the base blob, which Azure keeps as a previous version under the
// same ID, and then, in a second batch, that version by its ID: so nothing the listing showed is
// left behind as a version the pass never saw. Every sub-response is checked; 404 is deleted.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	if len(objects) == 0 {
		return nil, nil
	}
	if len(objects) > maxDeleteBatch {
		return nil, objectstore.Invalidf("%d objects exceed Blob Batch's limit of %d", len(objects), maxDeleteBatch)
	}
	failed, err := s.batchDelete(ctx, bucket, objects, func(o objectstore.ObjectVersion) *container.BatchDeleteOptions {
		switch {
		case strings.HasPrefix(o.Version, snapshotPrefix):
			return &container.BatchDeleteOptions{Snapshot: to.Ptr(strings.TrimPrefix(o.Version, snapshotPrefix))}
		case strings.HasPrefix(o.Version, versionPrefix):
			return &container.BatchDeleteOptions{VersionID: to.Ptr(strings.TrimPrefix(o.Version, versionPrefix))}
		}
		return &container.BatchDeleteOptions{DeleteOptions: blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}}
	})
	if err != nil {
		return nil, err
	}
	var errs []objectstore.ObjectError
	var retired []objectstore.ObjectVersion // current versions deleted as base blobs
	for i, o := range objects {
		if err, ok := failed[i]; ok {
			errs = append(errs, objectstore.ObjectError{Object: o, Err: err})
		} else if strings.HasPrefix(o.Version, currentPrefix) {
			retired = append(retired, o)
		}
	}
	if len(retired) == 0 {
		return errs, nil
	}
	failed, err = s.batchDelete(ctx, bucket, retired, func(o objectstore.ObjectVersion) *container.BatchDeleteOptions {
		return &container.BatchDeleteOptions{VersionID: to.Ptr(strings.TrimPrefix(o.Version, currentPrefix))}
	})
	if err != nil {
		// The base blobs are deleted; their versions are listed (and deleted) next pass.
		return nil, fmt.Errorf("deleting the versions that %d deleted current blobs left: %w", len(retired), err)
	}
	for i, o := range retired {
		if err, ok := failed[i]; ok {
			errs = append(errs, objectstore.ObjectError{Object: o, Err: err})
		}
	}
	return errs, nil
}

// batchDelete deletes objects in one Blob Batch request and returns the classified error of
// every sub-request that failed, by index (404 counts as deleted).
func (s *store) batchDelete(ctx context.Context, bucket string, objects []objectstore.ObjectVersion, opts func(objectstore.ObjectVersion) *container.BatchDeleteOptions) (map[int]error, error) {
	c, err := s.container(ctx, bucket)
	if err != nil {
		return nil, err
	}
	bb, err := c.NewBatchBuilder()
	if err != nil {
		return nil, err
	}
	for _, o := range objects {
		if err := bb.Delete(o.Key, opts(o)); err != nil {
			return nil, err
		}
	}
	resp, err := c.SubmitBatch(ctx, bb, nil)
	if err != nil {
		return nil, fmt.Errorf("deleting blobs in container %q: %w", bucket, s.classify(err))
	}
	if len(resp.Responses) != len(objects) {
		return nil, fmt.Errorf("blob batch answered %d sub-responses for %d deletes; the pass is retried", len(resp.Responses), len(objects))
	}
	failed := map[int]error{}
	for i, r := range resp.Responses {
		if r.Error == nil {
			continue
		}
		err := classify(r.Error)
		if errors.Is(err, objectstore.ErrNotFound) {
			continue
		}
		if errors.Is(err, objectstore.ErrObjectLocked) {
			err = &objectstore.LockedError{Cause: r.Error}
		}
		// Sub-responses come in the order of the sub-requests (Content-ID).
		if r.ContentID != nil && *r.ContentID >= 0 && *r.ContentID < len(objects) {
			i = *r.ContentID
		}
		failed[i] = err
	}
	return failed, nil
}

// PutObject implements objectstore.Writer.
func (s *store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	_, err = c.NewBlockBlobClient(key).UploadBuffer(ctx, data, nil)
	if err != nil {
		return fmt.Errorf("writing %q to container %q: %w", key, bucket, s.classify(err))
	}
	return nil
}

// OpenObject implements objectstore.DataPlane.
func (s *store) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	b, err := s.blobAt(ctx, bucket, objectstore.ObjectVersion{Key: key, Version: version})
	if err != nil {
		return nil, err
	}
	resp, err := b.DownloadStream(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %q from container %q: %w", key, bucket, s.classify(err))
	}
	return resp.Body, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Probe implements objectstore.DataPlane with one List Blobs of at most one blob (names only): a
// read every key and SAS with list permission may make.
func (s *store) Probe(ctx context.Context, bucket string) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr[int32](1)})
	if _, err := pager.NextPage(ctx); err != nil {
		return fmt.Errorf("probing container %q: %w", bucket, s.classify(brief(err)))
	}
	return nil
}

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
	// config is the bucket's providerConfig (never nil; the defaults where only the data plane
	// is used).
	config *azureapi.BackupBucketConfig
	// newBlobs builds the blob client of an account from its name, key and endpoint.
	newBlobs func(account) (*azblob.Client, error)
	// subscription is the subscription the management-plane credentials reach.
	subscription string
	// blobs is the data plane, which reaches each bucket's account through reachAccount.
	blobs *store

	mu              sync.Mutex
	reachedAccounts map[string]blobAccount // by bucket, for this request only
}
