// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"errors"
	"sync"
)

// ForEachObject calls fn for every object, at most parallelism at once, and returns one
// ObjectError per object fn failed on. It is DeleteObjects for stores that delete one object per
// request (and serves other per-object requests alike). fn returns nil or an error classified
// with this package's sentinels; ErrNotFound (the object is already gone) counts as done.
func ForEachObject(ctx context.Context, objects []ObjectVersion, parallelism int, fn func(context.Context, ObjectVersion) error) []ObjectError {
	if parallelism < 1 {
		parallelism = 1
	}
	var (
		mu   sync.Mutex
		errs []ObjectError
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallelism)
	)
	for _, o := range objects {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, o); err != nil && !errors.Is(err, ErrNotFound) {
				mu.Lock()
				errs = append(errs, ObjectError{Object: o, Err: err})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}
