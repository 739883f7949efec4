package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// maxDeleteBatch is Blob Batch's limit of sub-requests per batch.
	maxDeleteBatch = 256
	// listPageSize is the size of a listing page (Azure's maximum is 5000).
	listPageSize = 5000
)

// Object versions are encoded in ObjectVersion.Version with their kind, because a blob snapshot
// and a blob version are addressed differently.
const (
	snapshotPrefix = "snapshot:"
	versionPrefix  = "version:"
)

// store is one storage account's blob client for one request.
type store struct {
	client *azblob.Client
	// lifecycleDeferral is true when the account has the deferred-deletion lifecycle rule (an
	// account the extension manages says so in the generated secret).
	lifecycleDeferral bool
}

var _ objectstore.Store = (*store)(nil)

// MaxDeleteBatch implements objectstore.Store.
func (s *store) MaxDeleteBatch() int { return maxDeleteBatch }

func (s *store) container(name string) *container.Client {
	return s.client.ServiceClient().NewContainerClient(name)
}

// EnsureBucket implements objectstore.Store: the container exists and is private (public access
// is removed on every reconcile). The account's region is the account's: a container has none.
func (s *store) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if cfg, _ := b.Config.(*azureapi.BackupBucketConfig); cfg != nil && cfg.Immutability != nil {
		return fmt.Errorf("%w: providerConfig.immutability: a container immutability policy is set through the storage account's management plane, which a secret with only an account key cannot reach", objectstore.ErrInvalidConfig)
	}
	c := s.container(b.Name)
	_, err := c.Create(ctx, nil)
	switch {
	case err == nil, errorCode(err) == "ContainerAlreadyExists":
	case errorCode(err) == "ContainerBeingDeleted":
		return fmt.Errorf("container %q is still being deleted; creating it again later: %w", b.Name, err)
	default:
		return fmt.Errorf("creating container %q: %w", b.Name, classify(err))
	}
	props, err := c.GetProperties(ctx, nil)
	if err != nil {
		return classify(err)
	}
	if props.BlobPublicAccess != nil && *props.BlobPublicAccess != "" {
		// Setting the access policy without an access level makes the container private; the
		// container has no stored access policies of ours to keep.
		if _, err := c.SetAccessPolicy(ctx, nil); err != nil {
			return fmt.Errorf("making container %q private: %w", b.Name, classify(err))
		}
	}
	return nil
}

// DeleteBucket implements objectstore.Store. Azure deletes a container with everything in it,
// so emptiness is checked first: the engine, not the service, decides what may go.
func (s *store) DeleteBucket(ctx context.Context, name string) error {
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
	_, err = s.container(name).Delete(ctx, nil)
	if err == nil || errorCode(err) == "ContainerNotFound" || errorCode(err) == "ContainerBeingDeleted" {
		return nil
	}
	return classify(err)
}

var errStop = errors.New("stop listing")

// ListObjects implements objectstore.Store: blobs with their snapshots and versions.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	opts := &container.ListBlobsFlatOptions{
		Include:    container.ListBlobsInclude{Snapshots: true, Versions: true},
		MaxResults: to.Ptr(int32(listPageSize)),
	}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	pager := s.container(bucket).NewListBlobsFlatPager(opts)
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return classify(err)
		}
		page := make([]objectstore.ObjectVersion, 0, len(resp.Segment.BlobItems))
		for _, it := range resp.Segment.BlobItems {
			o := objectstore.ObjectVersion{Key: deref(it.Name)}
			switch {
			case deref(it.Snapshot) != "":
				o.Version = snapshotPrefix + *it.Snapshot
			case deref(it.VersionID) != "" && !deref(it.IsCurrentVersion):
				o.Version = versionPrefix + *it.VersionID
			}
			page = append(page, o)
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteObjects implements objectstore.Store with one Blob Batch request of up to 256 deletes.
// A base blob is deleted with its snapshots; every sub-response is checked.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if len(objects) == 0 {
		return nil, nil
	}
	if len(objects) > maxDeleteBatch {
		return nil, fmt.Errorf("%w: %d objects exceed Blob Batch's limit of %d", objectstore.ErrInvalidConfig, len(objects), maxDeleteBatch)
	}
	c := s.container(bucket)
	bb, err := c.NewBatchBuilder()
	if err != nil {
		return nil, err
	}
	for _, o := range objects {
		opts := &container.BatchDeleteOptions{}
		switch {
		case strings.HasPrefix(o.Version, snapshotPrefix):
			opts.Snapshot = to.Ptr(strings.TrimPrefix(o.Version, snapshotPrefix))
		case strings.HasPrefix(o.Version, versionPrefix):
			opts.VersionID = to.Ptr(strings.TrimPrefix(o.Version, versionPrefix))
		default:
			opts.DeleteOptions = blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}
		}
		if err := bb.Delete(o.Key, opts); err != nil {
			return nil, err
		}
	}
	resp, err := c.SubmitBatch(ctx, bb, nil)
	if err != nil {
		return nil, classify(err)
	}
	if len(resp.Responses) != len(objects) {
		return nil, fmt.Errorf("blob batch answered %d sub-responses for %d deletes; the pass is retried", len(resp.Responses), len(objects))
	}
	var errs []objectstore.ObjectError
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
		obj := objects[i]
		if r.ContentID != nil && *r.ContentID >= 0 && *r.ContentID < len(objects) {
			obj = objects[*r.ContentID]
		}
		errs = append(errs, objectstore.ObjectError{Object: obj, Err: err})
	}
	return errs, nil
}

// DeferDeletion implements objectstore.Store: on an account with the deferred-deletion lifecycle
// rule, every current blob under prefix gets the blob index tag the rule deletes by (blobs
// already tagged are skipped, so an interrupted pass resumes). Without the rule (an account key
// for an account the extension does not manage) it is ErrUnsupported.
func (s *store) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	return objectstore.Deferral{Rule: "lifecycle rule " + DeferredDeletionRule}, s.deferDeletion(ctx, bucket, prefix)
}

func (s *store) deferDeletion(ctx context.Context, bucket, prefix string) error {
	if !s.lifecycleDeferral {
		return fmt.Errorf("deferring deletions needs the storage account's lifecycle rule %q, which only accounts the extension manages have: %w", DeferredDeletionRule, objectstore.ErrUnsupported)
	}
	opts := &container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Tags: true}, MaxResults: to.Ptr(int32(listPageSize))}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	c := s.container(bucket)
	pager := c.NewListBlobsFlatPager(opts)
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return classify(err)
		}
		tags := map[string]map[string]string{}
		var todo []objectstore.ObjectVersion
		for _, it := range resp.Segment.BlobItems {
			have := map[string]string{}
			if it.BlobTags != nil {
				for _, t := range it.BlobTags.BlobTagSet {
					have[deref(t.Key)] = deref(t.Value)
				}
			}
			if have[DeferredDeletionTag] == "true" {
				continue
			}
			have[DeferredDeletionTag] = "true"
			tags[deref(it.Name)] = have
			todo = append(todo, objectstore.ObjectVersion{Key: deref(it.Name)})
		}
		failed := objectstore.ForEachObject(ctx, todo, 16, func(ctx context.Context, o objectstore.ObjectVersion) error {
			_, err := c.NewBlobClient(o.Key).SetTags(ctx, tags[o.Key], nil)
			return classify(err)
		})
		if len(failed) > 0 {
			return fmt.Errorf("tagging %d blobs for deferred deletion, first %q: %w", len(failed), failed[0].Object.Key, failed[0].Err)
		}
	}
	return nil
}

// PutObject implements objectstore.Store.
func (s *store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	_, err := s.container(bucket).NewBlockBlobClient(key).UploadBuffer(ctx, data, nil)
	return classify(err)
}

// GetObject implements objectstore.Store.
func (s *store) GetObject(ctx context.Context, bucket, key string) ([]byte, error) {
	resp, err := s.container(bucket).NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, classify(err)
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
