// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// SyntheticStore lists N objects under Prefix in pages of 1,000, made up on the fly, and accepts
// every delete at once: a deletion against it costs only the deleting side's memory and CPU, so
// that memory can be measured at sizes no stand-in serves in useful time.
type SyntheticStore struct {
	N       int
	Prefix  string
	Batch   int
	Deleted atomic.Int64
}

var _ objectstore.DataPlane = (*SyntheticStore)(nil)

// ListObjects implements objectstore.DataPlane.
func (s *SyntheticStore) ListObjects(_ context.Context, _, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if prefix != s.Prefix {
		return nil
	}
	for start := 0; start < s.N; start += 1000 {
		page := make([]objectstore.ObjectVersion, 0, 1000)
		for i := start; i < start+1000 && i < s.N; i++ {
			page = append(page, objectstore.ObjectVersion{Key: fmt.Sprintf("%setcd-main/v2/Full-%08d", s.Prefix, i), Version: fmt.Sprint(1_700_000_000_000_000 + i)})
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// DeleteObjects implements objectstore.DataPlane.
func (s *SyntheticStore) DeleteObjects(_ context.Context, _ string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	s.Deleted.Add(int64(len(objects)))
	return nil, nil
}

// MaxDeleteBatch implements objectstore.DataPlane.
func (s *SyntheticStore) MaxDeleteBatch() int { return s.Batch }

// Probe implements objectstore.DataPlane.
func (s *SyntheticStore) Probe(context.Context, string) error { return nil }

// OpenObject implements objectstore.DataPlane: it holds no content.
func (s *SyntheticStore) OpenObject(context.Context, string, string, string) (io.ReadCloser, error) {
	return nil, objectstore.ErrNotFound
}

// SnapshotRule implements objectstore.DataPlane: an unversioned store's.
func (s *SyntheticStore) SnapshotRule(context.Context, string) (objectstore.SnapshotRule, error) {
	return objectstore.SnapshotRule{Source: "synthetic"}, nil
}

// MeasureExact runs fn and returns the peak of the live heap above its level before, measured
// exactly (a full collection every 5 ms: slow, for memory runs only).
func MeasureExact(fn func() error) (float64, error) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if h := heap(); h > base && h-base > peak.Load() {
				peak.Store(h - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	err := fn()
	close(stop)
	wg.Wait()
	return float64(peak.Load()) / (1 << 20), err
}

// MemoryAtScale deletes prefixes of the given sizes from a SyntheticStore with the engine and with
// the list-everything-first strategy, and prints each one's exact peak live-heap growth: the
// engine's must stay flat, the other grows with the prefix.
func MemoryAtScale(batch, parallelism int, sizes []int) error {
	prefix, err := objectstore.EntryPrefix("shoot--bench--entry--1")
	if err != nil {
		return err
	}
	fmt.Printf("\nmemory at scale (synthetic store, batch %d, parallelism %d; exact live heap, a full collection every 5 ms):\n\n", batch, parallelism)
	fmt.Printf("| objects | engine (streamed) | list everything first |\n|---|---|---|\n")
	for _, n := range sizes {
		engineStore := &SyntheticStore{N: n, Prefix: prefix.String(), Batch: batch}
		engine, err := MeasureExact(func() error {
			res, err := objectstore.DeletePrefix(context.Background(), engineStore, "bench", prefix, objectstore.DeleteOptions{Parallelism: parallelism})
			if err == nil && res.Deleted != n {
				err = fmt.Errorf("engine deleted %d of %d", res.Deleted, n)
			}
			return err
		})
		if err != nil {
			return err
		}
		listAllStore := &SyntheticStore{N: n, Prefix: prefix.String(), Batch: batch}
		listAll, err := MeasureExact(func() error {
			var all []objectstore.ObjectVersion
			if err := listAllStore.ListObjects(context.Background(), "bench", prefix.String(), func(page []objectstore.ObjectVersion) error {
				all = append(all, page...)
				return nil
			}); err != nil {
				return err
			}
			for start := 0; start < len(all); start += batch {
				_, _ = listAllStore.DeleteObjects(context.Background(), "bench", all[start:min(start+batch, len(all))])
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.1f MiB | %.1f MiB |\n", n, engine, listAll)
	}
	return nil
}
