// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// namingStore records the operation each listing and deletion was named with.
type namingStore struct {
	*memstore.Store

	mu  *sync.Mutex
	ops *[]string
}

func (s namingStore) record(ctx context.Context, call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.ops = append(*s.ops, call+"="+objectstore.Operation(ctx))
}

func (s namingStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	s.record(ctx, "list")
	return s.Store.ListObjects(ctx, bucket, prefix, fn)
}

func (s namingStore) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	s.record(ctx, "delete")
	return s.Store.DeleteObjects(ctx, bucket, objects)
}

// TestDeletePrefixNamesItsCalls: the cloud request metrics label a deletion's requests by the
// engine's names; a listing under a caller's own name keeps that name, deletions are always
// named delete_objects. The second listing is the one that finds nothing left (DeletePrefix's Done).
func TestDeletePrefixNamesItsCalls(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  context.Context
		want []string
	}{
		{"unnamed", context.Background(), []string{"list=list_objects", "delete=delete_objects", "list=list_objects"}},
		{"named by the caller", objectstore.WithOperation(context.Background(), "inventory"), []string{"list=inventory", "delete=delete_objects", "list=inventory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memstore.New(10)
			fill(t, mem, "n--1/", 3)
			var ops []string
			store := namingStore{Store: mem, mu: &sync.Mutex{}, ops: &ops}
			prefix, _ := objectstore.EntryPrefix("n--1")
			if _, err := objectstore.DeletePrefix(c.ctx, store, "b", prefix, objectstore.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ops, c.want) {
				t.Fatalf("calls %q; want %q", ops, c.want)
			}
		})
	}
	if got := objectstore.Operation(context.Background()); got != objectstore.OpOther {
		t.Fatalf("an unnamed context's operation is %q; want %q", got, objectstore.OpOther)
	}
}
