// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bytes"
	"compress/gzip"
	"compress/lzw"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// memSource reads a memstore through the drill's Source, and counts what else would be asked.
type memSource struct{ s *memstore.Store }

func (m memSource) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return m.s.ListObjects(ctx, bucket, prefix, fn)
}

func (m memSource) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	return m.s.OpenObject(ctx, bucket, key, version)
}

func (m memSource) SnapshotRule(ctx context.Context, bucket string) (objectstore.SnapshotRule, error) {
	return m.s.SnapshotRule(ctx, bucket)
}

// checkChains is CheckChains with the rule of a store without versions (the memstore's unless a
// test switches versioning on).
func checkChains(t testing.TB, prefix string, objects []objectstore.ObjectVersion) []Chain {
	t.Helper()
	chains, err := CheckChains(context.Background(), prefix, objectstore.SnapshotRule{}, objects)
	if err != nil {
		t.Fatal(err)
	}
	return chains
}

// sourceEtcd is an etcd whose snapshots a test writes as etcd-backup-restore v0.43.0 writes them:
// the full snapshot is etcd's snapshot API stream (the database with etcd's SHA-256 appended,
// etcdutil.go:282-336), a delta is the JSON array of the watch events of its revisions with the
// SHA-256 of that JSON appended (snapshotter.go:438-477, 595-624), each compressed as the suffix
// says. The real etcd-backup-restore writes them in test/integration/drill.
type sourceEtcd struct {
	t      testing.TB
	etcd   *embed.Etcd
	client *clientv3.Client
	unix   int64

	stopOnce sync.Once
}

func newSourceEtcd(t testing.TB) *sourceEtcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	loop := url.URL{Scheme: "http", Host: "localhost:0"}
	cfg.ListenPeerUrls, cfg.ListenClientUrls = []url.URL{loop}, []url.URL{loop}
	cfg.AdvertisePeerUrls, cfg.AdvertiseClientUrls = []url.URL{loop}, []url.URL{loop}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.SnapshotCount = 100 // little raft log in memory: the benchmark measures the drill
	cfg.SnapshotCatchUpEntries, cfg.ExperimentalSnapshotCatchUpEntries = 100, 100
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("source etcd not ready")
	}
	// A socket client: v3client's in-process watch ends at once with "context canceled".
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Clients[0].Addr().String()}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	s := &sourceEtcd{t: t, etcd: e, client: client, unix: 1_700_000_000}
	t.Cleanup(s.stop)
	return s
}

// stop stops the etcd; a second call does nothing.
func (s *sourceEtcd) stop() {
	s.stopOnce.Do(func() {
		_ = s.client.Close()
		s.etcd.Close()
		s.client, s.etcd = nil, nil // what the server held becomes garbage
	})
}

func (s *sourceEtcd) put(key, value string) {
	s.t.Helper()
	if _, err := s.client.Put(context.Background(), key, value); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sourceEtcd) del(key string) {
	s.t.Helper()
	if _, err := s.client.Delete(context.Background(), key); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sourceEtcd) rev() int64 {
	s.t.Helper()
	resp, err := s.client.Get(context.Background(), "\x00", clientv3.WithCountOnly())
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.Header.Revision
}

// kvs is every key and value now.
func (s *sourceEtcd) kvs() map[string]string {
	s.t.Helper()
	return readKVs(s.t, s.client.KV)
}

func readKVs(t testing.TB, kv clientv3.KV) map[string]string {
	t.Helper()
	resp, err := kv.Get(context.Background(), "\x00", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range resp.Kvs {
		out[string(p.Key)] = string(p.Value)
	}
	return out
}

func (s *sourceEtcd) next() int64 { s.unix += 10; return s.unix }

// full returns a full snapshot's name and content, taken now, compressed by suffix.
func (s *sourceEtcd) full(suffix string) (string, []byte) {
	s.t.Helper()
	rev := s.rev()
	rc, err := s.client.Snapshot(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		s.t.Fatal(err)
	}
	return fmt.Sprintf("Full-%08d-%08d-%d%s", 0, rev, s.next(), suffix), compress(s.t, data, suffix)
}

// delta returns a delta's name and content holding the events of revisions from..to.
func (s *sourceEtcd) delta(from, to int64, suffix string) (string, []byte) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type timed struct {
		EtcdEvent *clientv3.Event `json:"etcdEvent"`
		Time      time.Time       `json:"time"`
	}
	var buf bytes.Buffer
	for wr := range s.client.Watch(ctx, "", clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := wr.Err(); err != nil {
			s.t.Fatal(err)
		}
		done := false
		for _, ev := range wr.Events {
			if ev.Kv.ModRevision > to {
				done = true
				break
			}
			b, err := json.Marshal(timed{EtcdEvent: ev, Time: time.Now()})
			if err != nil {
				s.t.Fatal(err)
			}
			if buf.Len() == 0 {
				buf.WriteByte('[')
			} else {
				buf.WriteByte(',')
			}
			buf.Write(b)
			done = ev.Kv.ModRevision == to
		}
		if done {
			break
		}
	}
	buf.WriteByte(']')
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return fmt.Sprintf("Incr-%08d-%08d-%d%s", from, to, s.next(), suffix), compress(s.t, buf.Bytes(), suffix)
}

func compress(t testing.TB, data []byte, suffix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch suffix {
	case "":
		return data
	case ".gz":
		w = gzip.NewWriter(&buf)
	case ".zlib":
		w = zlib.NewWriter(&buf)
	case ".Z":
		w = lzw.NewWriter(&buf, lzw.LSB, 8)
	default:
		return data
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
