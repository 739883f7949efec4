// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// chain is what the generator wrote: the etcd's last revision and the chain's size.
type chain struct {
	revision int64
	fullSize int64
	deltas   int
	bytes    int64
}

// generate writes a chain as etcd-backup-restore v0.43.0 writes it under prefix (uncompressed):
// a full snapshot of a source etcd holding about mib MiB (4 KiB values of random bytes, which
// compression would not shrink), streamed from etcd's snapshot API (the database with etcd's
// SHA-256 appended) through a file into the bucket, then deltas, each the JSON array of the
// watch events of its revisions (a new key and an overwrite) with the SHA-256 of that JSON
// appended. The source etcd is stopped before it returns.
func generate(ctx context.Context, s3c *s3.Client, bucket, prefix, work string, mib, deltas int) (chain, error) {
	var c chain
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(work, "source.etcd")
	loop := url.URL{Scheme: "http", Host: "localhost:0"}
	cfg.ListenPeerUrls, cfg.ListenClientUrls = []url.URL{loop}, []url.URL{loop}
	cfg.AdvertisePeerUrls, cfg.AdvertiseClientUrls = []url.URL{loop}, []url.URL{loop}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = int64(mib)*3<<20 + 1<<30
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return c, err
	}
	defer func() { e.Close(); _ = os.RemoveAll(cfg.Dir) }()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		return c, fmt.Errorf("source etcd not ready")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Clients[0].Addr().String()}, Logger: zap.NewNop(), MaxCallSendMsgSize: 8 << 20})
	if err != nil {
		return c, err
	}
	defer cli.Close()

	value := make([]byte, 4096)
	keys := mib * 256
	for i := 0; i < keys; i += 100 {
		ops := make([]clientv3.Op, 0, 100)
		for j := i; j < min(i+100, keys); j++ {
			_, _ = rand.Read(value)
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/big/%08d", j), string(value)))
		}
		if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			return c, err
		}
	}
	unix := time.Now().Unix() - int64(deltas) - 10
	resp, err := cli.Get(ctx, "\x00", clientv3.WithCountOnly())
	if err != nil {
		return c, err
	}
	fullRev := resp.Header.Revision
	full := fmt.Sprintf("%sFull-%08d-%08d-%d", prefix, 0, fullRev, unix)
	if c.fullSize, err = putSnapshot(ctx, cli, s3c, bucket, full, work); err != nil {
		return c, err
	}

	for d := range deltas {
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/small/%06d", d), "x"); err != nil {
			return c, err
		}
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/big/%08d", d%keys), "overwritten"); err != nil {
			return c, err
		}
	}
	c.revision = fullRev + 2*int64(deltas)
	c.deltas = deltas
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects := make(chan [2]any, 64)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	for range 8 {
		wg.Go(func() {
			for o := range objects {
				key, data := o[0].(string), o[1].([]byte)
				if _, err := s3c.PutObject(wctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
					fail(err)
					continue // drain
				}
				mu.Lock()
				c.bytes += int64(len(data))
				mu.Unlock()
			}
		})
	}
	if err := watchDeltas(wctx, cli, prefix, fullRev+1, c.revision, unix, objects); err != nil {
		fail(err)
	}
	close(objects)
	wg.Wait()
	if firstErr != nil {
		return c, firstErr
	}
	c.bytes += c.fullSize
	return c, nil
}

// watchDeltas sends the deltas of revisions from..last, two revisions each, as (key, content).
func watchDeltas(ctx context.Context, cli *clientv3.Client, prefix string, from, last, unix int64, objects chan<- [2]any) error {
	if from > last {
		return nil
	}
	type timed struct {
		EtcdEvent *clientv3.Event `json:"etcdEvent"`
		Time      time.Time       `json:"time"`
	}
	var buf bytes.Buffer
	for wr := range cli.Watch(ctx, "", clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := wr.Err(); err != nil {
			return err
		}
		for _, ev := range wr.Events {
			b, err := json.Marshal(timed{EtcdEvent: ev, Time: time.Now()})
			if err != nil {
				return err
			}
			if buf.Len() == 0 {
				buf.WriteByte('[')
			} else {
				buf.WriteByte(',')
			}
			buf.Write(b)
			if rev := ev.Kv.ModRevision; rev == from+1 { // two revisions a delta
				buf.WriteByte(']')
				sum := sha256.Sum256(buf.Bytes())
				buf.Write(sum[:])
				unix++
				select {
				case objects <- [2]any{fmt.Sprintf("%sIncr-%08d-%08d-%d", prefix, from, rev, unix), bytes.Clone(buf.Bytes())}:
				case <-ctx.Done():
					return ctx.Err()
				}
				buf.Reset()
				if rev == last {
					return nil
				}
				from = rev + 1
			}
		}
	}
	return fmt.Errorf("the watch ended before revision %d", last)
}

// putSnapshot streams etcd's snapshot into a file and the file into the bucket: never whole in
// memory.
func putSnapshot(ctx context.Context, cli *clientv3.Client, s3c *s3.Client, bucket, key, work string) (int64, error) {
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	path := filepath.Join(work, "full.snapshot")
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer func() { f.Close(); _ = os.Remove(path) }()
	n, err := io.Copy(f, rc)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: f, ContentLength: &n})
	return n, err
}
