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

func newAdaptiveLimiter(max int) *adaptiveLimiter {
	l := &adaptiveLimiter{max: max, limit: max}
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
