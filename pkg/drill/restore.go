// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"runtime/debug"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
)

// The member a restore creates, as etcd-backup-restore's defaults name it
// (pkg/types/restorer.go:21-31).
const (
	memberName   = "default"
	memberPeer   = "http://localhost:2380"
	clusterToken = "etcd-cluster"
	// Limits of the embedded etcd that applies deltas, etcd-backup-restore's defaults: one
	// revision of the source etcd is one transaction here, however many keys it wrote.
	maxRequestBytes = 10 * 1024 * 1024
	maxTxnOps       = 10 * 1024
	quotaBytes      = 8 * 1024 * 1024 * 1024
	etcdStartLimit  = time.Minute
	raftLogEntries  = 100
)

// restoreFull restores the full snapshot at dbPath into dataDir with etcdutl's snapshot restore,
// as etcd-backup-restore does (restorer.go:194-206), hash check on. etcd's backend panics (through
// zap's Panic) on a database it cannot open; that panic happens in this goroutine and is a
// finding. (A database damaged deeper, which bbolt reads in etcd's own goroutines, can still
// crash the process: see docs/restore-drills.md.)
func restoreFull(lg *zap.Logger, key, dbPath, dataDir string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newError(ReasonRestoreFailed, key, fmt.Errorf("%v", p), "etcd's snapshot restore could not open the verified database")
		}
	}()
	old := debug.SetPanicOnFault(true) // a fault reading the mapped database panics, recovered above
	defer debug.SetPanicOnFault(old)
	err = snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath:        dbPath,
		Name:                memberName,
		OutputDataDir:       dataDir,
		PeerURLs:            []string{memberPeer},
		InitialCluster:      memberName + "=" + memberPeer,
		InitialClusterToken: clusterToken,
	})
	if err != nil {
		return newError(ReasonRestoreFailed, key, err, "etcd's snapshot restore refused the verified database")
	}
	return nil
}

// embedded is the etcd that applies deltas to a restored data directory, reached in process.
type embedded struct {
	etcd   *embed.Etcd
	client *clientv3.Client
}

// startEmbedded starts etcd on dataDir as etcd-backup-restore's StartEmbeddedEtcd does
// (pkg/miscellaneous/miscellaneous.go:242-298: loopback URLs on free ports, no fsync, auth off),
// and reaches it through v3client (direct calls, no socket).
func startEmbedded(ctx context.Context, lg *zap.Logger, key, dataDir string) (m *embedded, err error) {
	defer func() { // etcd panics through zap on a data directory it cannot open
		if p := recover(); p != nil {
			m, err = nil, newError(ReasonRestoreFailed, key, fmt.Errorf("%v", p), "etcd could not start on the restored data directory")
		}
	}()
	cfg := embed.NewConfig()
	cfg.Dir = dataDir
	loop := url.URL{Scheme: "http", Host: "localhost:0"}
	cfg.ListenPeerUrls = []url.URL{loop}
	cfg.ListenClientUrls = []url.URL{loop}
	cfg.AdvertisePeerUrls = []url.URL{loop}
	cfg.AdvertiseClientUrls = []url.URL{loop}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.QuotaBackendBytes = quotaBytes
	cfg.MaxRequestBytes = maxRequestBytes
	cfg.MaxTxnOps = maxTxnOps
	cfg.UnsafeNoFsync = true
	// etcd keeps the raft log's recent entries (each a whole transaction) in memory until a
	// snapshot plus a catch-up tail for followers (10,000 and 5,000 by default); a single member
	// replaying deltas needs no tail: memory stays bounded by raftLogEntries transactions
	// however many deltas are applied.
	cfg.SnapshotCount = raftLogEntries
	cfg.SnapshotCatchUpEntries, cfg.ExperimentalSnapshotCatchUpEntries = raftLogEntries, raftLogEntries
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, startFailure(key, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, newError(ReasonRestoreFailed, key, err, "etcd stopped on the restored data directory")
	case <-time.After(etcdStartLimit):
		e.Close()
		return nil, newError(ReasonRestoreFailed, key, nil, "etcd on the restored data directory was not ready within %s", etcdStartLimit)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	if e.Server.AuthStore().IsAuthEnabled() {
		e.Server.AuthStore().AuthDisable()
	}
	return &embedded{etcd: e, client: v3client.New(e.Server)}, nil
}

// startFailure classifies embed.StartEtcd's error: failing to listen on localhost (no name
// resolution, no port: the machine or the child's confinement, before etcd opens the data
// directory) proves nothing about the backup; anything else is etcd refusing the restored data
// directory.
func startFailure(key string, err error) error {
	if oe := (*net.OpError)(nil); errors.As(err, &oe) {
		return fmt.Errorf("the embedded etcd could not listen on localhost (nothing proven about the backup): %w", err)
	}
	return newError(ReasonRestoreFailed, key, err, "etcd did not start on the restored data directory")
}

func (m *embedded) close() {
	_ = m.client.Close()
	m.etcd.Close()
}

// revision is the embedded etcd's current revision.
func (m *embedded) revision(ctx context.Context) (int64, error) {
	resp, err := m.client.Get(ctx, "\x00", clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// keys counts every key at the current revision.
func (m *embedded) keys(ctx context.Context) (int64, error) {
	resp, err := m.client.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// event is one element of a delta snapshot: etcd-backup-restore's brtypes.Event
// (pkg/types/restorer.go:170), a watch event as JSON.
type event struct {
	EtcdEvent *mvccpb.Event `json:"etcdEvent"`
}

// applyDelta streams the JSON events of the delta read from in (already verified) into etcd, one
// transaction per source revision, as etcd-backup-restore's applyEventsToEtcd does
// (restorer.go:552-581), skipping events the restored data already holds (the full snapshot may
// run ahead of its name, restorer.go:480-531), and checks that etcd then stands at the delta's
// last revision (verifySnapshotRevision, restorer.go:583-594). Only one revision's operations are
// held in memory at a time.
//
// A stream of deltas that ends inside this one (errStreamCut) is no finding: the sender stopped.
func (m *embedded) applyDelta(ctx context.Context, d Snapshot, in io.Reader) error {
	have, err := m.revision(ctx)
	if err != nil {
		return m.etcdError(ctx, d, err)
	}
	dec := json.NewDecoder(in)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		if c := cutOf(err); c != nil {
			return c
		}
		return newError(ReasonUndecodable, d.Key, err, "delta snapshot is not a JSON array of events")
	}
	var (
		ops     []clientv3.Op
		opsRev  int64
		lastRev int64
	)
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if _, err := m.client.Txn(ctx).Then(ops...).Commit(); err != nil {
			return m.etcdError(ctx, d, err)
		}
		ops = ops[:0]
		return nil
	}
	for dec.More() {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			if c := cutOf(err); c != nil {
				return c
			}
			return newError(ReasonUndecodable, d.Key, err, "delta snapshot holds an event that is not etcd's watch event")
		}
		if ev.EtcdEvent == nil || ev.EtcdEvent.Kv == nil {
			return newError(ReasonUndecodable, d.Key, nil, "delta snapshot holds an event without a key")
		}
		rev := ev.EtcdEvent.Kv.ModRevision
		if rev < lastRev || rev < d.StartRevision || rev > d.LastRevision {
			return newError(ReasonChainBroken, d.Key, nil, "event at revision %d is out of order or outside the delta's revisions %d-%d", rev, d.StartRevision, d.LastRevision)
		}
		lastRev = rev
		if rev <= have {
			continue
		}
		if rev != opsRev {
			if err := flush(); err != nil {
				return err
			}
			opsRev = rev
		}
		switch ev.EtcdEvent.Type {
		case mvccpb.PUT:
			ops = append(ops, clientv3.OpPut(string(ev.EtcdEvent.Kv.Key), string(ev.EtcdEvent.Kv.Value)))
		case mvccpb.DELETE:
			ops = append(ops, clientv3.OpDelete(string(ev.EtcdEvent.Kv.Key)))
		default:
			return newError(ReasonUndecodable, d.Key, nil, "event of unknown type %d", ev.EtcdEvent.Type)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		if c := cutOf(err); c != nil {
			return c
		}
		return newError(ReasonUndecodable, d.Key, err, "delta snapshot's JSON array does not end")
	}
	if _, err := dec.Token(); err != io.EOF {
		if c := cutOf(err); c != nil {
			return c
		}
		return newError(ReasonUndecodable, d.Key, err, "data after the delta snapshot's JSON array")
	}
	if err := flush(); err != nil {
		return err
	}
	got, err := m.revision(ctx)
	if err != nil {
		return m.etcdError(ctx, d, err)
	}
	if got != d.LastRevision {
		return newError(ReasonChainBroken, d.Key, nil, "after applying it etcd stands at revision %d, the delta's name says %d", got, d.LastRevision)
	}
	return nil
}

// etcdError classifies an error of the embedded etcd: the drill's context ending is not a
// finding; anything else is etcd refusing what the snapshots hold.
func (m *embedded) etcdError(ctx context.Context, d Snapshot, err error) error {
	if ctx.Err() != nil {
		return errors.Join(ctx.Err(), err)
	}
	return newError(ReasonRestoreFailed, d.Key, err, "etcd refused the delta's events")
}

// cutOf is err when the stream of deltas was cut (the decoder returns the reader's error as is),
// nil otherwise.
func cutOf(err error) error {
	if errors.Is(err, errStreamCut) {
		return err
	}
	return nil
}
