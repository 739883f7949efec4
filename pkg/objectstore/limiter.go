// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"sync"
)

// adaptiveLimiter bounds requests in flight; throttling halves the bound and every run of
// successes as long as the bound raises it by one again, up to the configured maximum (AIMD).
type adaptiveLimiter struct {
	mu        sync.Mutex
	cond      *sync.Cond
	max       int
	limit     int
	inFlight  int
	successes int
}

func newAdaptiveLimiter(most int) *adaptiveLimiter {
	l := &adaptiveLimiter{max: most, limit: most}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *adaptiveLimiter) acquire(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.inFlight >= l.limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.cond.Wait()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l.inFlight++
	return nil
}

func (l *adaptiveLimiter) release(ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	if ok {
		l.successes++
		if l.successes >= l.limit && l.limit < l.max {
			l.limit++
			l.successes = 0
		}
	} else {
		l.limit = max(1, l.limit/2)
		l.successes = 0
	}
	l.cond.Broadcast()
}

// cancel gives back a slot acquired for a request that was never sent: it counts neither as a
// success nor as throttling.
func (l *adaptiveLimiter) cancel() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	l.cond.Broadcast()
}

// Budget bounds the delete requests in flight of every deletion that shares it, whatever their
// prefixes: N entries deleted at once keep the store at the budget's level, not N times their
// own parallelism. Waiting requests get a slot in the order they asked (a channel's waiting
// senders are served first in, first out), so no deletion sharing it starves. A nil *Budget
// bounds nothing.
type Budget struct {
	slots chan struct{}
}

// NewBudget returns a budget of n requests in flight (at least 1).
func NewBudget(n int) *Budget {
	return &Budget{slots: make(chan struct{}, max(1, n))}
}

func (b *Budget) acquire(ctx context.Context) error {
	if b == nil {
		return nil
	}
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Budget) release() {
	if b != nil {
		<-b.slots
	}
}

var (
	budgetsMu sync.Mutex
	budgets   = map[string]*Budget{}
)

// SharedBudget is the process's budget for key (one per provider, region and bucket: the
// deletions against one bucket share it), made with n slots the first time key is asked for;
// later calls return the same budget whatever their n.
func SharedBudget(key string, n int) *Budget {
	budgetsMu.Lock()
	defer budgetsMu.Unlock()
	b, ok := budgets[key]
	if !ok {
		b = NewBudget(n)
		budgets[key] = b
	}
	return b
}
