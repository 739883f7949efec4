// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
)

// CountingProxy is a Proxy that counts the requests it answered by the operation each is.
type CountingProxy struct {
	*Proxy

	mu     sync.Mutex
	counts map[string]int
}

// StartCountingProxy starts a proxy to target that counts each request it answered under
// op(request). Close it when done.
func StartCountingProxy(target string, op func(*http.Request) string) (*CountingProxy, error) {
	c := &CountingProxy{counts: map[string]int{}}
	p, err := StartProxy(target, ProxyOptions{OnRequest: func(r *http.Request, _ int) {
		name := op(r)
		c.mu.Lock()
		c.counts[name]++
		c.mu.Unlock()
	}})
	if err != nil {
		return nil, err
	}
	c.Proxy = p
	return c, nil
}

// Reset forgets what was counted so far.
func (c *CountingProxy) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}

// Counts is what was counted since the start or the last Reset.
func (c *CountingProxy) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// String is Counts printed, its operations in order.
func (c *CountingProxy) String() string { return fmt.Sprint(c.Counts()) }
