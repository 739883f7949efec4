// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Source is the read-only part of an object store a drill needs. A drill never writes, tags or
// deletes: it is handed nothing that could.
type Source interface {
	// ListObjects is objectstore.Store.ListObjects: fn gets successive pages of every object
	// version whose key starts with prefix, until the listing ends or fn returns an error.
	ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error
	// OpenObject streams one version of one object ("": the current one); the caller closes
	// it. A missing object is an error wrapping objectstore.ErrNotFound; other errors wrap
	// objectstore's sentinels as ListObjects' do. Errors while reading the stream are the
	// store's too.
	OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error)
	// SnapshotRule is objectstore.DataPlane.SnapshotRule: how etcd-backup-restore lists and
	// reads the snapshots of bucket on this store, by which the drill selects its chains.
	SnapshotRule(ctx context.Context, bucket string) (objectstore.SnapshotRule, error)
}

// Options is a drill's budget and environment.
type Options struct {
	// ScratchDir is where the drill downloads and restores (a size-limited emptyDir in the
	// chart); each etcd's drill uses a new directory in it and removes it when done, success or
	// not. "" is os.TempDir().
	ScratchDir string
	// MaxBytes caps the bytes one etcd's drill reads from the store (0: no cap). A chain whose
	// listed size is larger is not downloaded at all: ReasonTooLarge.
	MaxBytes int64
	// MaxScratchBytes caps the decompressed bytes one etcd's drill writes to ScratchDir or holds
	// for its restore (the full snapshot and every delta; 0: no cap): ReasonTooLarge when reached.
	MaxScratchBytes int64
	// MaxDeltas caps the deltas of one etcd's chain (0: no cap). A chain with more is not
	// downloaded at all: ReasonTooLarge.
	MaxDeltas int
	// MaxKeys caps the object versions the drill's listing of the prefix takes in (0: no cap);
	// past it the listing stops and the drill is ReasonCutOff, with nothing downloaded.
	MaxKeys int
	// Deadline is the most one Drill takes, the listing and every etcd's chain together (0:
	// none). When it passes, the etcd being drilled and those not reached yet are ReasonCutOff.
	Deadline time.Duration
	// ReadRate caps the drill's read rate in bytes per second, all its downloads together (0:
	// none).
	ReadRate int64
	// Fetchers is how many deltas the drill downloads at once, ahead of the restore that applies
	// them in order (0: DefaultFetchers). MaxBytes and ReadRate hold for all of them together.
	Fetchers int
	// spillAbove is the most of one delta held in memory (0: deltaMemory); tests set it low.
	spillAbove int
	// Logger receives etcd's own log (etcdutl's restore, the embedded etcd); nil discards it.
	Logger *zap.Logger
	// Inspect, if set, is called with a client of the restored etcd before it is stopped, for
	// tests and demos that read back what was restored. Its error fails the drill as is. Only a
	// restore in this process calls it.
	Inspect func(ctx context.Context, etcd string, kv clientv3.KV) error
	// Restore restores each fetched chain: nil is RestoreStream in this process (with Logger
	// and Inspect); the controller passes a ChildRestorer's Restore, which restores in a child
	// process.
	Restore StreamRestorer
}

// Result is one etcd's drill.
type Result struct {
	// Etcd is the directory under the prefix, e.g. "etcd-main".
	Etcd string
	// Full is the key of the full snapshot restored from ("" when there is none).
	Full string
	// Deltas is how many deltas the chain holds.
	Deltas int
	// Revision is the revision the restored etcd stood at: the newest delta's last revision
	// (with no deltas, the full snapshot's own, which may exceed its name's).
	Revision int64
	// Keys is the number of keys the restored etcd held at Revision.
	Keys int64
	// Size is the chain's size as listed; BytesRead what the drill read of it.
	Size, BytesRead int64
	// Started is when the drill began; Duration how long it took.
	Started  time.Time
	Duration time.Duration
	// FullRestored is how long the restore took until etcd stood on the restored full snapshot
	// (etcd's restore and the embedded etcd's start); DeltaWait how long it then waited for
	// deltas to arrive. Set by RestoreStream, for telling whether the download or the restore
	// bounds a drill.
	FullRestored, DeltaWait time.Duration
	// Unconfined, set by ChildRestorer, is why its restore process ran without Landlock (the
	// kernel offers none), "" when it ran confined (see ChildRestorer).
	Unconfined string
	// Err is nil when the chain restored. An *Error (see ReasonOf) is a finding about the
	// backup; any other error is the store's or the drill's machinery's, and proves nothing
	// about the backup (retry later).
	Err error
}

// Drill proves, for every etcd under prefix (the entry's "<entry>/"), that its newest backup
// restores: it lists prefix once, selects each etcd's chain as etcd-backup-restore would on this
// store (Collect) and checks it by names (Chain), and for a chain
// without findings downloads the full snapshot and its deltas one after the other into a scratch
// directory, verifies and decompresses them as etcd-backup-restore v0.43.0 does, restores the
// full snapshot into an etcd data directory with etcd's own restore (etcdutl), applies every
// delta through an embedded etcd, and checks that it ends exactly at the newest delta's last
// revision (opts.Restore: in this process, or in a child). Nothing is written to the store.
//
// The returned error is the store's (the rule's, the listing's, an exclude mark's) or ctx's
// when it ended (the results so far are returned with it); each etcd's outcome is in its Result.
func Drill(ctx context.Context, src Source, bucket, prefix string, opts Options) ([]Result, error) {
	parent := ctx
	if opts.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Deadline, errDeadline)
		defer cancel()
	}
	chains, err := collect(objectstore.WithOperation(ctx, listOperation), src, bucket, prefix, opts.MaxKeys)
	if err != nil {
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		if cut := cutOff(ctx, opts); cut != nil {
			return nil, cut
		}
		return nil, err
	}
	results := make([]Result, 0, len(chains))
	for _, ch := range chains {
		if cut := cutOff(ctx, opts); cut != nil {
			r := newResult(ch) // not reached: nothing proven
			r.Err = cut
			results = append(results, r)
			continue
		}
		r := DrillChain(ctx, src, bucket, ch, opts)
		if parent.Err() != nil {
			return append(results, r), parent.Err()
		}
		if cut := cutOff(ctx, opts); cut != nil && r.Err != nil && ReasonOf(r.Err) == "" {
			r.Err = cut // stopped by the deadline, not failed: a finding made before it stands
		}
		results = append(results, r)
	}
	return results, nil
}

// errDeadline is the cause of a drill's context when its Options.Deadline passes.
var errDeadline = errors.New("the drill's deadline passed")

// cutOff is the ReasonCutOff error when ctx, a drill's, ended by its deadline; nil otherwise.
func cutOff(ctx context.Context, opts Options) error {
	if errors.Is(context.Cause(ctx), errDeadline) {
		return newError(ReasonCutOff, "", nil, "the drill's deadline of %s passed", opts.Deadline)
	}
	return nil
}

// listOperation names the drill's listing in the cloud request metrics; its downloads are
// objectstore.OpOpenObject (get_object), as every download is (fetcher.copyVerified).
const listOperation = "restore_drill"

// DrillChain drills one chain (from Collector.Chains or CheckChains) in a new directory in
// opts.ScratchDir, removed when it ends, whatever happened: FetchAndRestore with opts.Restore;
// see Drill. Duration spans all of it.
func DrillChain(ctx context.Context, src Source, bucket string, ch Chain, opts Options) (r Result) {
	start := time.Now()
	defer func() { r.Duration = time.Since(start) }()
	dir, err := os.MkdirTemp(opts.ScratchDir, "drill-")
	if err != nil {
		r = newResult(ch)
		r.Err = fmt.Errorf("scratch directory: %w", err)
		return r
	}
	defer os.RemoveAll(dir)
	restore := opts.Restore
	if restore == nil {
		restore = func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
			return RestoreStream(ctx, ch, dir, deltas, opts)
		}
	}
	return FetchAndRestore(ctx, src, bucket, ch, dir, opts, restore)
}

// newResult is the Result of drilling ch before anything happened: what the chain says, and
// the start. Every drill's result starts here.
func newResult(ch Chain) Result {
	r := Result{Etcd: ch.Etcd, Deltas: len(ch.Deltas), Size: ch.Size(), Started: time.Now()}
	if ch.Full != nil {
		r.Full = ch.Full.Key
	}
	return r
}

// checkBudget is the chain's verdict by names, then by its listed size against the budget.
func checkBudget(ch Chain, opts Options) error {
	if ch.Err != nil {
		return ch.Err
	}
	if opts.MaxDeltas > 0 && len(ch.Deltas) > opts.MaxDeltas {
		return newError(ReasonTooLarge, "", nil, "the chain of %s has %d deltas, the cap %d", ch.Etcd, len(ch.Deltas), opts.MaxDeltas)
	}
	if opts.MaxBytes > 0 && ch.Size() > opts.MaxBytes {
		return newError(ReasonTooLarge, "", nil, "the chain of %s is %d bytes (a full snapshot and %d deltas), the budget %d", ch.Etcd, ch.Size(), len(ch.Deltas), opts.MaxBytes)
	}
	return nil
}

// Names of the files a drill keeps in its scratch directory: the full snapshot until etcd's
// restore has copied it, a delta larger than deltaMemory until it is sent to the restore.
const fullFile = "full.db"

func deltaFile(i int) string { return fmt.Sprintf("delta-%d.json", i) }

// restoreChain restores ch in dir, where the full snapshot is fetched and verified already
// (fullFile): etcd's restore into dir/data, then every delta, which delta(i, d) returns the
// verified JSON of (read to its end before the next is asked for), applied in order.
// fullDone, if set, is called once etcd stands on the restored full snapshot.
func restoreChain(ctx context.Context, ch Chain, dir string, opts Options, delta func(i int, d Snapshot) (io.Reader, error), fullDone func()) (rev, keys int64, err error) {
	lg := opts.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	full := *ch.Full
	dbPath := filepath.Join(dir, fullFile)
	dataDir := filepath.Join(dir, "data")
	if err := restoreFull(lg, full.Key, dbPath, dataDir); err != nil {
		return 0, 0, err
	}
	if err := os.Remove(dbPath); err != nil { // etcd copied it into dataDir
		return 0, 0, err
	}
	if err := dropCache(filepath.Join(dataDir, "member", "snap", "db")); err != nil {
		return 0, 0, err
	}
	m, err := startEmbedded(ctx, lg, full.Key, dataDir)
	if err != nil {
		return 0, 0, err
	}
	defer m.close()
	if rev, err = m.revision(ctx); err != nil {
		return 0, 0, m.etcdError(ctx, full, err)
	}
	if rev < full.LastRevision {
		return 0, 0, newError(ReasonChainBroken, full.Key, nil, "the restored database stands at revision %d, before the %d its name says", rev, full.LastRevision)
	}
	if fullDone != nil {
		fullDone()
	}
	for i, d := range ch.Deltas {
		in, err := delta(i, d)
		if err != nil {
			return 0, 0, err
		}
		if err := m.applyDelta(ctx, d, in); err != nil {
			return 0, 0, err
		}
	}
	if rev, err = m.revision(ctx); err != nil {
		return 0, 0, m.etcdError(ctx, full, err)
	}
	if want := ch.LastRevision(); len(ch.Deltas) > 0 && rev != want {
		return 0, 0, newError(ReasonChainBroken, "", nil, "the restore ends at revision %d, the newest delta at %d", rev, want)
	}
	if keys, err = m.keys(ctx); err != nil {
		return 0, 0, m.etcdError(ctx, full, err)
	}
	if opts.Inspect != nil {
		if err := opts.Inspect(ctx, ch.Etcd, m.client.KV); err != nil {
			return 0, 0, err
		}
	}
	return rev, keys, nil
}
