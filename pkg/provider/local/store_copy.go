// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var (
	_ objectstore.ServerSideCopier  = (*store)(nil)
	_ objectstore.ConditionalCopier = (*store)(nil)
)

// CopyObject implements objectstore.ServerSideCopier: the source file is opened and checked
// against its listing (size and modification time, in the filesystem's full resolution), then
// copied from that open file into a temporary file renamed into place. A write of the source
// replaces its file (a rename): the open file stays the listed one whatever happens meanwhile.
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, nil)
}

// CopyObjectIf implements objectstore.ConditionalCopier: CopyObject, the copy put into place only
// where cond holds, as PutObjectStreamIf.
func (s *store) CopyObjectIf(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond objectstore.Precondition) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, &cond)
}

// copyObject is CopyObject, the destination conditioned on cond where it is not nil.
func (s *store) copyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond *objectstore.Precondition) error {
	in, err := s.OpenObject(ctx, srcBucket, src.Key, "")
	if err != nil {
		return fmt.Errorf("copying %s/%s to bucket %s: %w", srcBucket, src.Key, dstBucket, err)
	}
	defer func() { _ = in.Close() }()
	f, ok := in.(fs.File)
	if !ok {
		return fmt.Errorf("copying %s/%s: the opened source (%T) tells no size and time", srcBucket, src.Key, in)
	}
	fi, err := f.Stat()
	if err != nil {
		return classify(err)
	}
	if fi.Size() != src.Size || !fi.ModTime().Equal(src.Modified) {
		return fmt.Errorf("copying %s/%s to bucket %s: the source was written again since it was listed (%d bytes at %s, listed %d at %s)",
			srcBucket, src.Key, dstBucket, fi.Size(), fi.ModTime(), src.Size, src.Modified)
	}
	return s.writeObjectIf(dstBucket, dstKey, func(w io.Writer) error {
		_, err := io.Copy(w, objectstore.ExactStream(in, src.Key, src.Size))
		return err
	}, cond)
}
