// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// streamSegmentsInFlight bounds the segments of one object uploaded at once: its memory is
	// at most that many segments (64 MiB at the default segment size).
	streamSegmentsInFlight = 4
	// maxSegments is Swift's default max_manifest_segments: the most segments one static large
	// object's manifest names.
	maxSegments = 1000
)

// streamSegmentSize is the segment size of a streamed write and the largest object written in
// one PUT; an object of more than maxSegments of it gets larger segments. A variable so that a
// test reaches the static large object with small objects.
var streamSegmentSize int64 = 16 << 20

var (
	_ objectstore.StreamWriter      = (*store)(nil)
	_ objectstore.ConditionalWriter = (*store)(nil)
	_ objectstore.PartialWriteGuard = (*store)(nil)
)

// sloSegment is one entry of a static large object's manifest (multipart-manifest=put).
type sloSegment struct {
	Path      string `json:"path"`
	ETag      string `json:"etag"`
	SizeBytes int64  `json:"size_bytes"`
}

// PutObjectStream implements objectstore.StreamWriter: one PUT up to the segment size (read
// into memory first, so that a stream shorter or longer than size never reaches Swift), else a
// static large object: segments read one by one into buffers (at most streamSegmentsInFlight at
// once) and written as objects under "<key>/slo-<run>/", then the manifest PUT to key, which
// Swift checks against every segment's ETag and size. The segments lie under the key's own name,
// inside its entry's prefix, as etcd-backup-restore's Swift snapstore puts its chunks: the
// entry's deletion deletes them with it. On any failure before the manifest is written, the
// segments written are deleted (with a context of their own: a cancelled copy leaves none).
// A key that held a static large object keeps its earlier segments when it is written again.
func (s *store) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	return s.putObjectStream(ctx, bucket, key, r, size, "")
}

// WriteGuards implements objectstore.PartialWriteGuard: Swift honours If-None-Match: * on an object PUT
// (a static large object's manifest PUT too) but has no If-Match on a PUT, so a write that
// replaces a listed version cannot be conditioned on it.
func (s *store) WriteGuards(g objectstore.Guard) bool { return g == objectstore.GuardAbsent }

// PutObjectStreamIf implements objectstore.ConditionalWriter for a key that must be missing:
// PutObjectStream with If-None-Match: * on the PUT that stores the object (the one PUT, or the
// manifest PUT of a static large object, after its segments, which are then deleted). Swift
// answers 412: ErrPreconditionFailed. A write that replaces a version returns ErrUnsupported
// (see WriteGuards) and writes nothing.
func (s *store) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	if !s.WriteGuards(cond.Guard()) {
		return fmt.Errorf("writing %s: Swift cannot condition a PUT on the version it replaces: %w", key, objectstore.ErrUnsupported)
	}
	return s.putObjectStream(ctx, bucket, key, r, size, "*")
}

// putObjectStream is PutObjectStream with ifNoneMatch ("" or "*") on the PUT that stores the object.
func (s *store) putObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64, ifNoneMatch string) error {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	exact := objectstore.ExactStream(r, key, size)
	segment := max(streamSegmentSize, (size+maxSegments-1)/maxSegments)
	if size <= segment {
		data, err := io.ReadAll(exact)
		if err != nil {
			return err
		}
		return s.putObject(ctx, bucket, key, data, ifNoneMatch)
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	var run [8]byte
	if _, err := rand.Read(run[:]); err != nil {
		return err
	}
	prefix := fmt.Sprintf("%s/slo-%s/", key, hex.EncodeToString(run[:]))
	segments, begun, err := s.putSegments(ctx, c, bucket, prefix, exact, size, segment)
	if err == nil {
		var manifest []byte
		if manifest, err = json.Marshal(segments); err == nil {
			// No ETag of the body: Swift checks a manifest's ETag header against the segments' (the
			// manifest itself names each segment's ETag and size, which Swift checks).
			_, err = objects.Create(ctx, c, bucket, key, objects.CreateOpts{Content: bytes.NewReader(manifest), ContentLength: int64(len(manifest)), MultipartManifest: "put", NoETag: true, IfNoneMatch: ifNoneMatch}).Extract()
			err = writeError(bucket, key, err)
		}
	}
	if err != nil {
		if derr := s.deleteSegments(context.WithoutCancel(ctx), c, bucket, prefix, begun); derr != nil {
			return fmt.Errorf("%w (deleting its segments under %s failed too: %w)", err, prefix, derr)
		}
		return err
	}
	return nil
}

// putSegments reads size bytes from r (which ends with io.EOF after them, see ExactStream) in
// segments of segment bytes and writes them under prefix, at most streamSegmentsInFlight at
// once. It returns the manifest's entries in order and how many segment writes it began (the
// segments prefix + segmentName(0 ... begun-1) may exist), or the first failure.
func (s *store) putSegments(parent context.Context, c *gophercloud.ServiceClient, bucket, prefix string, r io.Reader, size, segment int64) (_ []sloSegment, begun int, _ error) {
	// A failure stops new segments (ctx) but never cuts a segment write short: a PUT cancelled
	// after its body was sent may still be stored by Swift after the caller's cleanup deleted its
	// name, leaving a segment nobody lists for deletion. Writes end on the caller's context only.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	count := int((size + segment - 1) / segment)
	var (
		mu       sync.Mutex
		failed   error
		wg       sync.WaitGroup
		free     = make(chan []byte, streamSegmentsInFlight)
		manifest = make([]sloSegment, count)
	)
	for range streamSegmentsInFlight {
		free <- nil // allocated on first use
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failed == nil {
			failed = err
			cancel()
		}
	}
	for i := range count {
		var buf []byte
		select {
		case buf = <-free:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		n := min(segment, size-int64(i)*segment)
		if int64(cap(buf)) < n {
			buf = make([]byte, segment)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			fail(err)
			break
		}
		name := prefix + segmentName(i)
		begun++
		wg.Go(func() {
			defer func() { free <- buf }()
			res, err := objects.Create(parent, c, bucket, name, objects.CreateOpts{Content: bytes.NewReader(buf), ContentLength: n}).Extract()
			if err != nil {
				fail(containerError(bucket, err))
				return
			}
			manifest[i] = sloSegment{Path: "/" + bucket + "/" + name, ETag: res.ETag, SizeBytes: n}
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, begun, failed
	}
	if err := ctx.Err(); err != nil {
		return nil, begun, err
	}
	// The stream must end here: ExactStream answers io.EOF, or an error for a longer one.
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		if err == nil {
			err = fmt.Errorf("the stream holds more than %d bytes", size)
		}
		return nil, begun, err
	}
	return manifest, begun, nil
}

// segmentName is the name of segment i under its object's prefix: names sort in segment order.
func segmentName(i int) string { return fmt.Sprintf("%08d", i) }

// deleteSegments deletes the segments prefix + segmentName(0 ... n-1) (gone ones count as
// deleted) and returns the first failure.
func (s *store) deleteSegments(ctx context.Context, c *gophercloud.ServiceClient, bucket, prefix string, n int) error {
	var first error
	for i := range n {
		_, err := objects.Delete(ctx, c, bucket, prefix+segmentName(i), nil).Extract()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) && first == nil {
			first = classify(err)
		}
	}
	return first
}

// writeError classifies the error of the PUT that stores key: a 412 is its If-None-Match
// refused (ErrPreconditionFailed), others as containerError.
func writeError(bucket, key string, err error) error {
	if gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed) {
		return fmt.Errorf("writing %s to container %s: it exists: %w", key, bucket, objectstore.ErrPreconditionFailed)
	}
	return containerError(bucket, err)
}

// containerError classifies a write's error: a 404 is the container's.
func containerError(bucket string, err error) error {
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return fmt.Errorf("container %q: %w", bucket, objectstore.ErrBucketNotFound)
	}
	return classify(err)
}
