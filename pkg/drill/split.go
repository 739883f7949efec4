// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The drill in two halves that overlap, for a caller that restores in another process (an etcd
// that meets a damaged database in its own goroutines can crash the process it runs in):
// FetchAndRestore downloads and verifies the chain in the caller's process, which holds the
// store's credentials, and hands it to a StreamRestorer (RestoreStream, in process or in a child)
// that needs nothing but the scratch directory and a pipe. The restore of the full snapshot
// starts as soon as its download is verified; the deltas are downloaded meanwhile, several at
// once, and each is sent on the pipe, in order, once it is verified: the restore applies it as
// it arrives. Nothing unverified is ever restored.

// StreamRestorer restores ch in dir, where the full snapshot is fetched and verified already
// (full.db), applying ch's deltas in order as they arrive on deltas (each one a frame: its JSON's
// length as 8 bytes big-endian, then the verified JSON; see RestoreStream). It must read no more
// frames than ch has deltas and must not write outside dir. Result.Err is as DrillChain's: an
// *Error is a finding, anything else proves nothing about the backup. If deltas ends before
// every delta arrived, the restore ends with an error that is no finding (the sender's own
// error says why).
type StreamRestorer func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result

// DefaultFetchers is how many deltas a drill downloads at once when Options.Fetchers is 0.
const DefaultFetchers = 4

// FetchAndRestore drills ch in dir (which must exist and which the caller removes): it checks
// the budget before reading anything, downloads the full snapshot into dir and the deltas
// meanwhile (Options.Fetchers at once, within the drill's read rate and byte caps in total),
// starts restore once the full snapshot is verified and sends it the verified deltas in order.
//
// The outcome is the first failure in the chain's order: the restore's finding about the full
// snapshot or a delta it received wins over the download's failure of a later delta, which wins
// over the restore's complaint that the stream ended. So a delta found corrupt late still gives
// its own reason, and nothing is restorable unless every hash was checked and the restore
// reported the chain's last revision. BytesRead is what was read from the store.
func FetchAndRestore(ctx context.Context, src Source, bucket string, ch Chain, dir string, opts Options, restore StreamRestorer) (r Result) {
	r = newResult(ch)
	defer func() { r.Duration = time.Since(r.Started) }()
	if err := checkBudget(ch, opts); err != nil {
		r.Err = err
		return r
	}
	if ch.Full == nil {
		r.Err = newError(ReasonNoFullSnapshot, "", nil, "no full snapshot of %s to restore", ch.Etcd)
		return r
	}
	f := newFetcher(src, bucket, opts)
	defer func() { r.BytesRead = f.read.Load() }()
	q := startDeltas(ctx, f, ch.Deltas, dir, opts.fetchers(), cmp.Or(opts.spillAbove, deltaMemory))
	defer q.stop() // before the caller removes dir: no fetch writes there after we return
	if err := f.fetch(ctx, *ch.Full, filepath.Join(dir, fullFile), fullBuffer); err != nil {
		r.Err = err
		return r
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		r.Err = err
		return r
	}
	restored := make(chan Result, 1)
	go func() {
		res := restore(ctx, ch, dir, pr)
		pr.Close() // a send blocked on a restore that ended fails now
		restored <- res
	}()
	sendErr := q.send(pw)
	pw.Close()
	res := <-restored
	r.Unconfined = res.Unconfined // whatever the outcome
	var we writeError
	switch {
	case sendErr == nil, errors.As(sendErr, &we) && res.Err != nil:
		// Every delta sent (or the restore stopped reading, and says why).
		r.Revision, r.Keys, r.Err = res.Revision, res.Keys, res.Err
		r.FullRestored, r.DeltaWait = res.FullRestored, res.DeltaWait
		if r.Err == nil && len(ch.Deltas) > 0 && r.Revision != ch.LastRevision() {
			r.Err = newError(ReasonChainBroken, "", nil, "the restore ends at revision %d, the newest delta at %d", r.Revision, ch.LastRevision())
		}
	case ReasonOf(res.Err) != "":
		r.Err = res.Err // a finding before the delta that failed to download
	default:
		r.Err = sendErr
	}
	return r
}

// RestoreStream is the StreamRestorer of this process: etcd's restore of the full snapshot in
// dir, then every delta read from deltas applied through an embedded etcd, the revision checked
// after each and at the end. The restored data directory is left in dir, which the caller
// removes. Etcd, Full, Deltas, Size, Revision, Keys, Started and Duration are set (BytesRead is
// FetchAndRestore's).
func RestoreStream(ctx context.Context, ch Chain, dir string, deltas io.Reader, opts Options) Result {
	r := newResult(ch)
	if ch.Full == nil {
		r.Err = newError(ReasonNoFullSnapshot, "", nil, "no full snapshot of %s to restore", ch.Etcd)
		return r
	}
	in := bufio.NewReaderSize(deltas, deltaBuffer)
	r.Revision, r.Keys, r.Err = restoreChain(ctx, ch, dir, opts, func(i int, _ Snapshot) (io.Reader, error) {
		var hdr [8]byte
		waiting := time.Now()
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return nil, fmt.Errorf("delta %d of %s did not arrive: %w", i, ch.Etcd, err)
		}
		r.DeltaWait += time.Since(waiting)
		return &frame{r: &io.LimitedReader{R: in, N: int64(binary.BigEndian.Uint64(hdr[:]))}}, nil
	}, func() { r.FullRestored = time.Since(r.Started) })
	r.Duration = time.Since(r.Started)
	return r
}

// frame is one delta's JSON on the stream; reading past its end is io.EOF, and a stream that
// ends inside it is io.ErrUnexpectedEOF (the sender stopped), no finding about the delta.
type frame struct{ r *io.LimitedReader }

func (f *frame) Read(p []byte) (int, error) {
	if f.r.N == 0 {
		return 0, io.EOF
	}
	n, err := f.r.Read(p)
	if err == io.EOF && f.r.N > 0 {
		err = errStreamCut
	}
	return n, err
}

// errStreamCut: the stream of deltas ended inside a delta (the sender stopped).
var errStreamCut = errors.New("the stream of deltas ended inside a delta")

// NewFinding builds the *Error of a finding with reason, key and detail, for a caller that
// receives a finding from another process. A reason that is not a finding's gives nil.
func NewFinding(reason Reason, key, detail string) error {
	if _, ok := sentinels[reason]; !ok {
		return nil
	}
	return &Error{Reason: reason, Key: key, Detail: detail}
}

// fetchers is Options.Fetchers or its default.
func (o Options) fetchers() int {
	if o.Fetchers > 0 {
		return o.Fetchers
	}
	return DefaultFetchers
}
