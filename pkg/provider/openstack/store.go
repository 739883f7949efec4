// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"
	"github.com/gophercloud/gophercloud/v2/pagination"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// defaultMaxDeletes is Swift's default bulk-delete limit, used when /info does not say.
	defaultMaxDeletes = 10000
	// maxBulkBatch caps one bulk delete below the cluster's limit: Swift works through a request
	// at about its disk's pace (here ~100 objects/s), so 10,000 names would keep one request busy
	// for minutes; smaller requests in parallel keep the same throughput, progress fine-grained
	// and each request well inside a reconcile's time budget.
	maxBulkBatch = 1000
	// singleDeleteBatch and singleDeleteParallelism shape the fallback without bulk delete.
	singleDeleteBatch       = 100
	singleDeleteParallelism = 16
	// listPageSize is Swift's default (and usual maximum) listing limit.
	listPageSize = 10000
)

// store is one authenticated Swift client for one request. It authenticates on first use.
type store struct {
	creds      credentials
	httpClient http.Client
	pageSize   int
	rewrite    func(string) string

	mu        sync.Mutex
	client    *gophercloud.ServiceClient
	bulkLimit int                         // 0: bulk delete unavailable
	session   *gophercloud.ProviderClient // the authenticated Keystone session
	userID    string                      // the session's user
	// noObjectVersioning: the cluster's /info was read and lists no object_versioning, so a
	// container's X-Versions-Enabled would be dropped without a word.
	noObjectVersioning bool
}

// management is the management plane: the data plane's session and a bucket's providerConfig.
type management struct {
	*store

	// cfg is the bucket's providerConfig (never nil), which EnsureBucket converges to.
	cfg *osapi.BackupBucketConfig
	// unusable, when set, is why the bucket is refused: its shoots' etcd-backup would not work.
	unusable error
}

var (
	_ objectstore.DataPlane  = (*store)(nil)
	_ objectstore.Writer     = (*store)(nil)
	_ objectstore.Management = (*management)(nil)
)

// MaxDeleteBatch implements objectstore.DataPlane: the cluster's advertised bulk-delete limit (read
// from /info after authentication, which runs here if needed), capped at maxBulkBatch; without
// bulk delete, a batch of single deletes.
func (s *store) MaxDeleteBatch() int {
	if _, err := s.swift(context.Background()); err != nil {
		return singleDeleteBatch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bulkLimit > 0 {
		return min(s.bulkLimit, maxBulkBatch)
	}
	return singleDeleteBatch
}

// ListObjects implements objectstore.DataPlane. Every version is listed whatever the container's
// versioning says now: a container whose versioning was switched off still holds the versions
// written while it was on. Swift's object versioning answers ?versions for any container (and a
// cluster without it ignores the parameter and lists the objects). Pages continue from the last
// entry's name and version (marker + version_marker), so that a page boundary between two
// versions of one object skips none of them; the listing ends at the first empty page.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	opts := versionListOpts{Prefix: prefix, Limit: s.pageSize}
	for {
		infos, err := listPage(ctx, c, bucket, opts)
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("container %q: %w", bucket, objectstore.ErrBucketNotFound)
		}
		if err != nil {
			return classify(err)
		}
		if len(infos) == 0 {
			return nil
		}
		page := make([]objectstore.ObjectVersion, len(infos))
		for i, o := range infos {
			page[i] = listed(o)
		}
		if err := fn(page); err != nil {
			return err
		}
		// A short page is not the end: Swift may answer one before the end (a sharded
		// container's listing, a proxy's own limit). Only an empty page is.
		last := infos[len(infos)-1]
		opts.Marker, opts.VersionMarker = last.Name, last.VersionID
	}
}

// deleteMarkerType is the content type Swift's object versioning lists a delete marker with.
const deleteMarkerType = "application/x-deleted;swift_versions_deleted=1"

// listed is the object version of one entry of a versions listing. An entry without a version ID
// comes from a cluster without object versioning (it ignored ?versions): a plain object, current.
// Otherwise only the latest version that is not a delete marker is current. Swift has no
// retention: RetainUntil stays zero.
func listed(o objects.Object) objectstore.ObjectVersion {
	deleteMarker := strings.HasPrefix(o.ContentType, deleteMarkerType)
	return objectstore.ObjectVersion{
		Key:          o.Name,
		Version:      o.VersionID,
		Size:         o.Bytes,
		Modified:     o.LastModified,
		ETag:         o.Hash,
		Noncurrent:   o.VersionID != "" && (!o.IsLatest || deleteMarker),
		DeleteMarker: o.VersionID != "" && deleteMarker,
	}
}

// versionListOpts is a versions listing query with the version_marker that gophercloud's ListOpts
// lacks.
type versionListOpts struct {
	Prefix        string `q:"prefix"`
	Limit         int    `q:"limit"`
	Marker        string `q:"marker"`
	VersionMarker string `q:"version_marker"`
	Versions      bool   `q:"versions"`
}

// ToObjectListParams implements objects.ListOptsBuilder.
func (o versionListOpts) ToObjectListParams() (string, error) {
	o.Versions = true
	q, err := gophercloud.BuildQueryString(o)
	if err != nil {
		return "", err
	}
	return q.String(), nil
}

// listPage reads one page of a listing (gophercloud's pager would continue by name alone).
func listPage(ctx context.Context, c *gophercloud.ServiceClient, bucket string, opts versionListOpts) ([]objects.Object, error) {
	var infos []objects.Object
	err := objects.List(c, bucket, opts).EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		var err error
		infos, err = objects.ExtractInfo(page)
		return false, err
	})
	return infos, err
}

// unversioned is the version ID Swift lists for an object written without versioning.
const unversioned = "null"

// DeleteObjects implements objectstore.DataPlane. A container that is neither ours nor in
// provider-openstack's form is refused (ErrOwnedByOther, ownershipOf), one with legacy versioning
// too (see legacyVersioning); otherwise one bulk delete when the cluster offers it, no
// object names a version other than the unversioned one and the container's versioning is off
// (a delete by name then removes the object; with versioning on it would only write a delete
// marker); single deletes by version otherwise. Every per-object outcome is classified.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, nil
	}
	c, err := s.swift(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	limit := s.bulkLimit
	s.mu.Unlock()
	head, md, err := readContainer(ctx, c, bucket)
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return nil, nil // the container is gone, and so is everything in it
	case err != nil:
		return nil, classify(err)
	}
	if owner, err := ownershipOf(bucket, md); owner == foreign {
		return nil, err
	}
	if err := legacyVersioning(bucket, head); err != nil {
		return nil, err
	}
	byName := limit > 0 && !head.VersionsEnabled
	for _, o := range objs {
		byName = byName && (o.Version == "" || o.Version == unversioned)
	}
	if !byName {
		return s.deleteSingly(ctx, c, bucket, objs), nil
	}
	if len(objs) > limit {
		return nil, objectstore.Invalidf("%d objects exceed the cluster's bulk-delete limit of %d", len(objs), limit)
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Key
	}
	resp, err := objects.BulkDelete(ctx, c, bucket, names).Extract()
	if err != nil {
		return nil, classify(err)
	}
	return bulkErrors(bucket, len(names), resp)
}

// legacyVersioning refuses deletions in a container with Swift's legacy versioning: there a
// DELETE does not remove the object. With X-Versions-Location it restores the object's previous
// version from the archive container (the object is back, and the pass would count it deleted);
// with X-History-Location it copies the object into the archive container first (the backup lives
// on there). The archive container is another container, which may hold anything, and the
// extension never deletes outside the entry's prefix in its own container: the operator decides.
func legacyVersioning(bucket string, head *containers.GetHeader) error {
	for _, h := range []struct{ name, archive, effect string }{
		{"X-Versions-Location", head.VersionsLocation, "restores the object's previous version from there instead of deleting it"},
		{"X-History-Location", head.HistoryLocation, "copies the object there before deleting it"},
	} {
		if h.archive != "" {
			return objectstore.Invalidf("container %q has Swift's legacy versioning (%s: %s): a DELETE %s, so no backup "+
				"can be deleted for real; remove the header (swift post -H 'X-Remove-%s: x' %s) and delete the "+
				"archived copies of this container's objects in %q yourself, or use object versioning "+
				"(providerConfig versioning: true), whose versions the extension deletes",
				bucket, h.name, h.archive, h.effect, strings.TrimPrefix(h.name, "X-"), bucket, h.archive)
		}
	}
	return nil
}

// bulkErrors turns a bulk-delete response for sent names into per-object errors. Swift answers
// 200 with its own status in the body; a non-2xx status with no per-object errors failed as a
// whole, and a request Swift stopped early (too many failures) accounts for fewer names than were
// sent: then nothing can be taken as deleted.
func bulkErrors(bucket string, sent int, resp *objects.BulkDeleteResponse) ([]objectstore.ObjectError, error) {
	var errs []objectstore.ObjectError
	for _, e := range resp.Errors {
		if len(e) != 2 {
			return nil, fmt.Errorf("unexpected bulk-delete error entry %q", e)
		}
		name, status := e[0], e[1]
		if unescaped, err := url.PathUnescape(name); err == nil {
			name = unescaped
		}
		name = strings.TrimPrefix(strings.TrimPrefix(name, "/"), bucket+"/")
		errs = append(errs, objectstore.ObjectError{Object: objectstore.ObjectVersion{Key: name}, Err: classifyStatus(status)})
	}
	if len(errs) == 0 && !strings.HasPrefix(resp.ResponseStatus, "2") {
		return nil, fmt.Errorf("bulk delete answered %q: %s: %w", resp.ResponseStatus, resp.ResponseBody, classifyStatus(resp.ResponseStatus))
	}
	if accounted := resp.NumberDeleted + resp.NumberNotFound + len(resp.Errors); accounted < sent {
		return nil, fmt.Errorf("bulk delete answered %q for %d of %d names (%s); the pass is retried", resp.ResponseStatus, accounted, sent, resp.ResponseBody)
	}
	return errs, nil
}

// deleteSingly deletes objects one request each, with bounded parallelism.
func (s *store) deleteSingly(ctx context.Context, c *gophercloud.ServiceClient, bucket string, objs []objectstore.ObjectVersion) []objectstore.ObjectError {
	return objectstore.ForEachObject(ctx, objs, singleDeleteParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
		_, err := objects.Delete(ctx, c, bucket, o.Key, objects.DeleteOpts{ObjectVersionID: o.Version}).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil
		}
		return classify(err)
	})
}

// PutObject implements objectstore.Writer.
func (s *store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	return s.putObject(ctx, bucket, key, data, "")
}

// putObject is PutObject with ifNoneMatch ("" or "*": refused with ErrPreconditionFailed where
// key exists).
func (s *store) putObject(ctx context.Context, bucket, key string, data []byte, ifNoneMatch string) error {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	_, err = objects.Create(ctx, c, bucket, key, objects.CreateOpts{Content: bytes.NewReader(data), ContentLength: int64(len(data)), IfNoneMatch: ifNoneMatch}).Extract()
	return writeError(bucket, key, err)
}

// OpenObject implements objectstore.DataPlane.
func (s *store) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	c, err := s.swift(ctx)
	if err != nil {
		return nil, err
	}
	var opts objects.DownloadOptsBuilder
	if version != "" {
		opts = objects.DownloadOpts{ObjectVersionID: version}
	}
	res := objects.Download(ctx, c, bucket, key, opts)
	if gophercloud.ResponseCodeIs(res.Err, http.StatusNotFound) {
		return nil, fmt.Errorf("object %q: %w", key, objectstore.ErrNotFound)
	}
	if res.Err != nil {
		return nil, classify(res.Err)
	}
	return res.Body, nil
}

// Probe implements objectstore.DataPlane with Keystone's authentication (once per store) and one
// GET of the container with limit=1: the GET on the container that a generated application
// credential's access rules allow (see ContainerAccessRules). It reads only: whether the bucket's
// shoots could use the operator's secret is the management plane's check (EnsureBucket).
func (s *store) Probe(ctx context.Context, bucket string) error {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	err = objects.List(c, bucket, objects.ListOpts{Limit: 1}).EachPage(ctx, func(context.Context, pagination.Page) (bool, error) {
		return false, nil
	})
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return fmt.Errorf("container %q: %w", bucket, objectstore.ErrBucketNotFound)
	}
	return classify(err)
}
