// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package memstore

import (
	"context"
	"io"
	"sync"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Op names a Store operation that Faults can fail.
type Op string

// The operations Faults can fail.
const (
	OpEnsureBucket  Op = "EnsureBucket"
	OpDeleteBucket  Op = "DeleteBucket"
	OpListObjects   Op = "ListObjects"
	OpDeleteObjects Op = "DeleteObjects"
	OpDeferDeletion Op = "DeferDeletion"
	OpProbe         Op = "Probe"
	OpPutObject     Op = "PutObject"
	OpOpenObject    Op = "OpenObject"
)

// Faults wraps a *Store and fails the operations it is told to, so that unit
// tests reach every error path of the code above the store with the store's own sentinels. It
// is safe for concurrent use; what it is not told to fail goes to the wrapped store.
type Faults struct {
	*Store

	mu        sync.Mutex
	fail      map[Op]error
	objectErr error
	hangAfter map[Op]int
	calls     map[Op]int
}

var (
	_ objectstore.DataPlane    = (*Faults)(nil)
	_ objectstore.Management   = (*Faults)(nil)
	_ objectstore.Writer       = (*Faults)(nil)
	_ objectstore.StreamWriter = (*Faults)(nil)
)

// WithFaults wraps s.
func WithFaults(s *Store) *Faults {
	return &Faults{Store: s, fail: map[Op]error{}, hangAfter: map[Op]int{}, calls: map[Op]int{}}
}

// Fail makes every call of op return err (nil: op works again).
func (f *Faults) Fail(op Op, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.fail, op)
		return
	}
	f.fail[op] = err
}

// FailObjects makes DeleteObjects report every object it is given as not deleted with err,
// deleting none (nil: it deletes again). The request as a whole succeeds.
func (f *Faults) FailObjects(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objectErr = err
}

// HangAfter lets n more calls of op through and makes every later one wait until its context
// ends and return the context's error, as a request cut off by a deadline (n < 0: never hang).
func (f *Faults) HangAfter(op Op, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 0 {
		delete(f.hangAfter, op)
		return
	}
	f.hangAfter[op] = f.calls[op] + n
}

// Calls returns how many times op was called.
func (f *Faults) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// enter counts a call of op and returns the error it must fail with, if any.
func (f *Faults) enter(ctx context.Context, op Op) error {
	f.mu.Lock()
	f.calls[op]++
	err := f.fail[op]
	limit, hangs := f.hangAfter[op]
	hang := hangs && f.calls[op] > limit
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// EnsureBucket implements objectstore.Management.
func (f *Faults) EnsureBucket(ctx context.Context, bucket objectstore.Bucket) error {
	if err := f.enter(ctx, OpEnsureBucket); err != nil {
		return err
	}
	return f.Store.EnsureBucket(ctx, bucket)
}

// DeleteBucket implements objectstore.Management.
func (f *Faults) DeleteBucket(ctx context.Context, name string) error {
	if err := f.enter(ctx, OpDeleteBucket); err != nil {
		return err
	}
	return f.Store.DeleteBucket(ctx, name)
}

// ListObjects implements objectstore.DataPlane.
func (f *Faults) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := f.enter(ctx, OpListObjects); err != nil {
		return err
	}
	return f.Store.ListObjects(ctx, bucket, prefix, fn)
}

// DeleteObjects implements objectstore.DataPlane.
func (f *Faults) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := f.enter(ctx, OpDeleteObjects); err != nil {
		return nil, err
	}
	f.mu.Lock()
	objectErr := f.objectErr
	f.mu.Unlock()
	if objectErr != nil {
		errs := make([]objectstore.ObjectError, len(objects))
		for i, o := range objects {
			errs[i] = objectstore.ObjectError{Object: o, Err: objectErr}
		}
		return errs, nil
	}
	return f.Store.DeleteObjects(ctx, bucket, objects)
}

// DeferDeletion implements objectstore.Management.
func (f *Faults) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := f.enter(ctx, OpDeferDeletion); err != nil {
		return objectstore.Deferral{}, err
	}
	return f.Store.DeferDeletion(ctx, bucket, prefix)
}

// Probe implements objectstore.DataPlane.
func (f *Faults) Probe(ctx context.Context, bucket string) error {
	if err := f.enter(ctx, OpProbe); err != nil {
		return err
	}
	return f.Store.Probe(ctx, bucket)
}

// PutObject implements objectstore.Writer.
func (f *Faults) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	if err := f.enter(ctx, OpPutObject); err != nil {
		return err
	}
	return f.Store.PutObject(ctx, bucket, key, data)
}

// PutObjectStream implements objectstore.StreamWriter; OpPutObject fails it as it fails PutObject.
func (f *Faults) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	if err := f.enter(ctx, OpPutObject); err != nil {
		return err
	}
	return f.Store.PutObjectStream(ctx, bucket, key, r, size)
}

// PutObjectStreamIf implements objectstore.ConditionalWriter; OpPutObject fails it as it fails
// PutObject.
func (f *Faults) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	if err := f.enter(ctx, OpPutObject); err != nil {
		return err
	}
	return f.Store.PutObjectStreamIf(ctx, bucket, key, r, size, cond)
}

// OpenObject implements objectstore.DataPlane.
func (f *Faults) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := f.enter(ctx, OpOpenObject); err != nil {
		return nil, err
	}
	return f.Store.OpenObject(ctx, bucket, key, version)
}
