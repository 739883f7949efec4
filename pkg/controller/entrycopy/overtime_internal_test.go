// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// TestEntryLive: the Guard of a pass past its deadline lets a write commit only while the
// entry, read from the API reader, is the pass's and not being deleted.
func TestEntryLive(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		change func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry)
		want   error
	}{
		{"live", func(*testing.T, client.Client, *extensionsv1alpha1.BackupEntry) {}, nil},
		{"being deleted", func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry) {
			be.Finalizers = []string{"test"}
			if err := c.Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, be); err != nil {
				t.Fatal(err)
			}
		}, ErrEntryDeleted},
		{"gone", func(t *testing.T, c client.Client, be *extensionsv1alpha1.BackupEntry) {
			if err := c.Delete(ctx, be); err != nil {
				t.Fatal(err)
			}
		}, ErrEntryDeleted},
		{"another object of its name", func(*testing.T, client.Client, *extensionsv1alpha1.BackupEntry) {}, ErrEntryDeleted},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "shoot--p--live--1"
			rig := newCopyRig(t, memstore.New(10), name, controllertest.Config{}, now)
			be := &extensionsv1alpha1.BackupEntry{}
			if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
				t.Fatal(err)
			}
			pass := be.DeepCopy() // the entry as the pass read it
			c.change(t, rig.c, be)
			if c.name == "another object of its name" {
				pass.UID = types.UID("the pass's") // the pass's entry was deleted and created again
			}
			err := rig.cp.entryLive(pass)(ctx)
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("entryLive: %v; want %v", err, c.want)
			}
		})
	}
}

// TestPassDeadline: a test may shorten the pass's deadline, never lengthen it past the one an
// entry's deletion waits for.
func TestPassDeadline(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{
		{0, connect.CopyPassDeadline},
		{time.Second, time.Second},
		{connect.CopyPassDeadline + time.Minute, connect.CopyPassDeadline},
	} {
		if got := (Options{PassDeadline: c.set}).deadline(); got != c.want {
			t.Errorf("PassDeadline %s: %s; want %s", c.set, got, c.want)
		}
	}
}

// farStore is an in-memory store (no copy inside it) whose read of key holds back its last 64
// KiB until held's receiver closes go, and until the pass's deadline (deadline after the read
// began) has passed: a snapshot still being copied at its pass's deadline.
type farStore struct {
	controllertest.Store
	objectstore.StreamWriter
	objectstore.ConditionalWriter

	key      string
	deadline time.Duration
	held     chan<- struct{}
	goOn     <-chan struct{}
}

func (s farStore) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	r, err := s.Store.OpenObject(ctx, bucket, key, version)
	if err != nil || key != s.key {
		return r, err
	}
	opened := time.Now()
	data, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		return nil, err
	}
	cut := len(data) - 64<<10
	rest := func() io.Reader {
		close(s.held)
		<-s.goOn
		time.Sleep(time.Until(opened.Add(s.deadline))) // past the pass's deadline, which began before
		return bytes.NewReader(data[cut:])
	}
	return io.NopCloser(io.MultiReader(bytes.NewReader(data[:cut]), &lazyReader{open: rest})), nil
}

type lazyReader struct {
	open func() io.Reader
	r    io.Reader
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil {
		l.r = l.open()
	}
	return l.r.Read(p)
}

// TestPassPastItsDeadline: a full snapshot still being read at its pass's (shortened) deadline
// is copied whole while the entry lives; where the entry's deletion begins meanwhile, the copy
// bucket gets nothing of it (the entry's deletion may empty the copy's prefix once the pass's
// deadline and margin have passed after its deletionTimestamp), and nothing is published on the
// entry.
func TestPassPastItsDeadline(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ deleted, noSlot bool }{{false, false}, {true, false}, {false, true}} {
		deleted := c.deleted
		name := "shoot--p--far--1"
		key := name + "/etcd-main/v2/Full-00000000-00000010-1764417600"
		data := bytes.Repeat([]byte("a full snapshot "), (2<<20)/16)
		mem := controllertest.Bucket(t, "bucket")
		if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
			t.Fatal(err)
		}
		if err := mem.PutObject(ctx, "bucket", key, data); err != nil {
			t.Fatal(err)
		}
		held, goOn := make(chan struct{}), make(chan struct{})
		store := farStore{Store: mem, StreamWriter: mem, ConditionalWriter: mem, key: key, deadline: time.Second, held: held, goOn: goOn}
		rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}, now)
		rig.cp.opts.PassDeadline = time.Second
		if c.noSlot {
			rig.cp.overtime = newOvertimeSlots(1)
			rig.cp.overtime <- struct{}{} // another pass is past its deadline
		}
		if err := rig.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
			t.Fatal(err)
		}
		marked := make(chan error, 1)
		go func() {
			<-held
			var err error
			if deleted {
				err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					be := &extensionsv1alpha1.BackupEntry{}
					if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
						return err
					}
					be.Finalizers = []string{"test"}
					if err := rig.c.Update(ctx, be); err != nil {
						return err
					}
					return rig.c.Delete(ctx, be)
				})
			}
			marked <- err
			close(goOn)
		}()
		cond := rig.pass()
		if err := <-marked; err != nil {
			t.Fatalf("marking the entry deleted: %v", err)
		}
		got, err := objectstore.ReadObject(ctx, mem, "bucket-copy", key)
		if c.noSlot {
			// Cut off at the deadline: the copy holds nothing of it, the entry is told.
			if !errors.Is(err, objectstore.ErrNotFound) || cond == nil {
				t.Errorf("no overtime slot: the copy holds %d bytes (%v), BackupsCopied %v; want nothing, published", len(got), err, cond)
			}
			continue
		}
		switch {
		case !deleted && cond == nil:
			t.Errorf("live entry: no BackupsCopied published")
		case deleted && cond != nil:
			t.Errorf("entry being deleted: BackupsCopied published on it: %s %s", cond.Status, cond.Reason)
		}
		switch {
		case !deleted && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("live entry: the copy holds %d bytes (%v); want the snapshot whole", len(got), err)
		case deleted && !errors.Is(err, objectstore.ErrNotFound):
			t.Errorf("entry being deleted: the copy holds %d bytes (%v); want nothing", len(got), err)
		}
	}
}

// TestOvertimeSlots: workers-1 passes (at least one) go on past their deadline at once; a slot
// released is free again.
func TestOvertimeSlots(t *testing.T) {
	for _, c := range []struct{ workers, want int }{{4, 3}, {2, 1}, {1, 1}} {
		s := newOvertimeSlots(c.workers)
		var release func()
		got := 0
		for range c.workers + 1 {
			if r, ok := s.take(); ok {
				got, release = got+1, r
			}
		}
		if got != c.want {
			t.Errorf("%d workers: %d passes in overtime at once; want %d", c.workers, got, c.want)
		}
		release()
		if _, ok := s.take(); !ok {
			t.Errorf("%d workers: a released slot is not free again", c.workers)
		}
	}
}
