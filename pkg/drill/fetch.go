// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/lzw"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// hashSize is the size of the SHA-256 digest appended to every snapshot.
const hashSize = sha256.Size

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// lzwLiteralWidth is etcd-backup-restore's LZW literal width (pkg/compressor/types.go:32).
const lzwLiteralWidth = 8

// Copy buffers: the full snapshot is copied in large reads (fewer system calls per GiB); each
// delta fetcher has a small one.
const (
	fullBuffer  = 1 << 20
	deltaBuffer = 64 << 10
)

// fetcher downloads one drill's objects, streaming, within the drill's budget. Its methods may
// run concurrently (several deltas at once): the counters are shared, so the caps and the read
// rate (one limiter) hold for the drill in total.
type fetcher struct {
	src     Source
	bucket  string
	limiter *rate.Limiter // nil: no read rate limit
	// read counts the bytes read from the store; maxRead caps them (0: no cap).
	read    atomic.Int64
	maxRead int64
	// written counts the decompressed bytes written to scratch (or held for the restore);
	// maxScratch caps them (0: no cap).
	written    atomic.Int64
	maxScratch int64
}

// newFetcher is a fetcher of bucket in src within opts' budget.
func newFetcher(src Source, bucket string, opts Options) *fetcher {
	f := &fetcher{src: src, bucket: bucket, maxRead: opts.MaxBytes, maxScratch: opts.MaxScratchBytes}
	if opts.ReadRate > 0 {
		f.limiter = rate.NewLimiter(rate.Limit(opts.ReadRate), int(min(opts.ReadRate, 256*1024)))
	}
	return f
}

// srcError marks an error of the store's stream, which says nothing about the backup.
type srcError struct{ err error }

func (e srcError) Error() string { return e.err.Error() }
func (e srcError) Unwrap() error { return e.err }

// overBudget is returned by the counting reader and writer when a cap is reached.
type overBudget struct{ what string }

func (e overBudget) Error() string { return e.what }

// storeReader reads the object's stream for the fetcher: at the read rate, counting against the
// budget, marking the store's own errors.
type storeReader struct {
	ctx context.Context
	f   *fetcher
	r   io.Reader
}

func (s *storeReader) Read(p []byte) (int, error) {
	if s.f.limiter != nil && len(p) > s.f.limiter.Burst() {
		p = p[:s.f.limiter.Burst()]
	}
	if s.f.maxRead > 0 { // read no more than one byte past the cap (per concurrent fetch)
		room := max(s.f.maxRead-s.f.read.Load()+1, 1)
		if int64(len(p)) > room {
			p = p[:room]
		}
	}
	n, err := s.r.Read(p)
	if read := s.f.read.Add(int64(n)); s.f.maxRead > 0 && read > s.f.maxRead {
		return n, overBudget{fmt.Sprintf("more than %d bytes read from the store", s.f.maxRead)}
	}
	if s.f.limiter != nil && n > 0 {
		if werr := s.f.limiter.WaitN(s.ctx, n); werr != nil {
			return n, srcError{werr}
		}
	}
	if err != nil && err != io.EOF {
		err = srcError{err}
	}
	return n, err
}

// tailHasher writes everything to w and hashes all but the last hashSize bytes seen, which it
// holds back: at the end, sum is the hash of the payload and tail is the hash appended to it.
type tailHasher struct {
	w    io.Writer
	h    hash.Hash
	tail []byte
	n    int64  // bytes written
	head []byte // the first bytes written, to tell a misnamed compression
	f    *fetcher
}

func (t *tailHasher) Write(p []byte) (int, error) {
	if written := t.f.written.Add(int64(len(p))); t.f.maxScratch > 0 && written > t.f.maxScratch {
		return 0, overBudget{fmt.Sprintf("more than %d bytes of scratch space", t.f.maxScratch)}
	}
	if _, err := t.w.Write(p); err != nil {
		return 0, err
	}
	t.n += int64(len(p))
	if len(t.head) < len(gzipMagic) {
		t.head = append(t.head, p[:min(len(p), len(gzipMagic)-len(t.head))]...)
	}
	if len(p) >= hashSize {
		t.h.Write(t.tail)
		t.h.Write(p[:len(p)-hashSize])
		t.tail = append(t.tail[:0], p[len(p)-hashSize:]...)
		return len(p), nil
	}
	buf := append(append(make([]byte, 0, 2*hashSize), t.tail...), p...)
	cut := max(len(buf)-hashSize, 0)
	t.h.Write(buf[:cut])
	t.tail = append(t.tail[:0], buf[cut:]...)
	return len(p), nil
}

// fetch downloads s into the file path (new), verified and decompressed as copyVerified does,
// copying with a buffer of bufSize. A delta's file is cut to its JSON; a full snapshot's keeps
// the hash, which etcd's restore checks once more.
func (f *fetcher) fetch(ctx context.Context, s Snapshot, path string, bufSize int) error {
	out, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	payload, err := f.copyVerified(ctx, s, newDropBehind(out), bufSize)
	if err != nil {
		return err
	}
	if s.Kind == KindDelta {
		if err := out.Truncate(payload); err != nil {
			return err
		}
	}
	return out.Close()
}

// copyVerified downloads s into out, decompressed as its suffix says, and verifies the SHA-256
// appended to its content as etcd-backup-restore does: for a full snapshot, the hash etcd's
// snapshot API appends to the database, present when the length is 512·n+32
// (pkg/etcdutil/etcdutil.go:340-408, etcdutl's hasChecksum); for a delta, the hash the
// snapshotter appends to its JSON events (snapshotter.go:472-477, checked in restorer.go:618-659).
// Everything is written to out, the hash included. It returns the payload's length (without the
// hash); out holds nothing that may be used unless the error is nil.
//
// Errors: an *Error (HashMismatch, Undecodable, TooLarge, KeyRefused) about the object, or the store's own
// error (wrapped with %w) or ctx's.
func (f *fetcher) copyVerified(ctx context.Context, s Snapshot, out io.Writer, bufSize int) (int64, error) {
	rc, err := f.src.OpenObject(objectstore.WithOperation(ctx, objectstore.OpOpenObject), f.bucket, s.Key, s.Version)
	if errors.Is(err, objectstore.ErrKeyRefused) {
		return 0, newError(ReasonKeyRefused, s.Key, err, "the store refused the customer-provided encryption key of the entry's secret, which etcd-backup-restore restores with")
	}
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", s.Key, err)
	}
	defer rc.Close()

	th := &tailHasher{w: out, h: sha256.New(), f: f}
	if err := decompressInto(th, &storeReader{ctx: ctx, f: f, r: rc}, s.Compression, bufSize); err != nil {
		return 0, f.classify(s, err)
	}
	payload := th.n - hashSize
	switch {
	case th.n == 0:
		return 0, newError(ReasonUndecodable, s.Key, nil, "empty snapshot")
	case s.Kind == KindFull && th.n%512 != hashSize:
		return 0, newError(ReasonUndecodable, s.Key, nil, "no SHA-256 appended to the database (%d bytes is not 512·n+32): truncated or not a snapshot", th.n)
	case s.Kind == KindDelta && th.n <= hashSize:
		return 0, newError(ReasonUndecodable, s.Key, nil, "delta snapshot is missing its hash (%d bytes)", th.n)
	}
	if sum := th.h.Sum(nil); !bytes.Equal(sum, th.tail) {
		if s.Compression == suffixNone && bytes.HasPrefix(th.head, gzipMagic) {
			return 0, newError(ReasonUndecodable, s.Key, nil, "the content is gzip-compressed, the name says uncompressed")
		}
		return 0, newError(ReasonHashMismatch, s.Key, nil, "SHA-256 of the content is %x, the snapshot says %x", sum, th.tail)
	}
	return payload, nil
}

// decompressInto copies r into w through the decompressor that suffix names
// (IsSnapshotCompressed and DecompressSnapshot, pkg/compressor/compressor.go:62-144),
// with a buffer of bufSize (compressed streams are read through a bufio.Reader of that size).
func decompressInto(w io.Writer, r io.Reader, suffix string, bufSize int) error {
	var dr io.Reader
	if suffix != suffixNone {
		r = bufio.NewReaderSize(r, bufSize)
	}
	switch suffix {
	case suffixNone:
		dr = r
	case suffixGzip:
		gz, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer gz.Close()
		dr = gz
	case suffixZlib:
		zr, err := zlib.NewReader(r)
		if err != nil {
			return err
		}
		defer zr.Close()
		dr = zr
	case suffixLZW:
		lr := lzw.NewReader(r, lzw.LSB, lzwLiteralWidth)
		defer lr.Close()
		dr = lr
	default:
		return fmt.Errorf("unsupported compression suffix %q", suffix)
	}
	_, err := io.CopyBuffer(w, dr, make([]byte, bufSize))
	return err
}

// classify turns a failed copy into a finding or passes the store's error on.
func (f *fetcher) classify(s Snapshot, err error) error {
	var se srcError
	var ob overBudget
	switch {
	case errors.As(err, &ob):
		return newError(ReasonTooLarge, s.Key, nil, "%s", ob.what)
	case errors.As(err, &se):
		return fmt.Errorf("reading %s: %w", s.Key, se.err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return newError(ReasonUndecodable, s.Key, err, "%s stream ends early (empty or truncated)", compressionName(s.Compression))
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, zlib.ErrChecksum):
		// The compression's own checksum of the content: a changed byte, found before the SHA-256.
		return newError(ReasonHashMismatch, s.Key, err, "the %s checksum of the content does not match", compressionName(s.Compression))
	case errors.As(err, new(*os.PathError)):
		return err // the scratch disk, not the backup
	default:
		return newError(ReasonUndecodable, s.Key, err, "not readable as %s", compressionName(s.Compression))
	}
}

func compressionName(suffix string) string {
	switch suffix {
	case suffixGzip:
		return "gzip"
	case suffixZlib:
		return "zlib"
	case suffixLZW:
		return "LZW"
	case suffixNone:
		return "uncompressed"
	}
	return "compression " + suffix
}
