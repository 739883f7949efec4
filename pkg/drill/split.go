package drill

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/time/rate"
)

// The drill in two halves, for a caller that restores in another process (an etcd that meets a
// damaged database in its own goroutines can crash the process it runs in): FetchChain downloads
// and verifies a chain into a directory in the caller's process, which holds the store's
// credentials; RestoreFetched restores those files and needs nothing but the directory. Together
// they prove what DrillChain proves, except that the scratch space holds every delta at once
// (MaxScratchBytes counts them all).

// FetchChain downloads ch into dir (which must exist and which the caller removes), verified and
// decompressed as DrillChain does, within opts' budget. It returns what it read from the store.
// Errors are as DrillChain's: an *Error is a finding, anything else the store's or the disk's.
func FetchChain(ctx context.Context, src Source, bucket string, ch Chain, dir string, opts Options) (read int64, err error) {
	if err := checkBudget(ch, opts); err != nil {
		return 0, err
	}
	f := &fetcher{src: src, bucket: bucket, maxRead: opts.MaxBytes, maxScratch: opts.MaxScratchBytes}
	if opts.ReadRate > 0 {
		f.limiter = rate.NewLimiter(rate.Limit(opts.ReadRate), int(min(opts.ReadRate, 256*1024)))
	}
	defer func() { read = f.read }()
	if _, err := f.fetch(ctx, *ch.Full, filepath.Join(dir, fullFile)); err != nil {
		return 0, err
	}
	for i, d := range ch.Deltas {
		if _, err := f.fetch(ctx, d, filepath.Join(dir, deltaFile(i))); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RestoreFetched restores what FetchChain left in dir for ch: etcd's restore of the full
// snapshot, every delta applied through an embedded etcd, the revision checked. It consumes the
// files (the restored data directory is left in dir, which the caller removes). The result's Err
// is an *Error for a finding; Etcd, Full, Deltas, Size, Revision, Keys, Started and Duration are
// set (BytesRead is FetchChain's).
func RestoreFetched(ctx context.Context, ch Chain, dir string, opts Options) Result {
	r := Result{Etcd: ch.Etcd, Deltas: len(ch.Deltas), Size: ch.Size(), Started: time.Now()}
	if ch.Full == nil {
		r.Err = newError(ReasonNoFullSnapshot, "", nil, "no full snapshot of %s to restore", ch.Etcd)
		return r
	}
	r.Full = ch.Full.Key
	r.Revision, r.Keys, r.Err = restoreChain(ctx, ch, dir, opts, func(i int, _ Snapshot) (string, error) {
		path := filepath.Join(dir, deltaFile(i))
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("delta %d of %s was not fetched: %w", i, ch.Etcd, err)
		}
		return path, nil
	})
	r.Duration = time.Since(r.Started)
	return r
}

// NewFinding builds the *Error of a finding with reason, key and detail, for a caller that
// receives a finding from another process. A reason that is not a finding's gives nil.
func NewFinding(reason Reason, key, detail string) error {
	if _, ok := sentinels[reason]; !ok {
		return nil
	}
	return &Error{Reason: reason, Key: key, Detail: detail}
}
