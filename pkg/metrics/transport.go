// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Transport counts and times every request next sends for provider into CloudRequests and
// CloudRequestDuration, labelled with the operation of the request's context
// (objectstore.WithOperation). Every provider
// wraps the transports of its clients with it (data plane, management plane, token endpoints).
func Transport(provider string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{provider: provider, next: next}
}

type transport struct {
	provider string
	next     http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := objectstore.Operation(req.Context())
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	CloudRequestDuration.WithLabelValues(t.provider, op).Observe(time.Since(start).Seconds())
	code := "network_error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	CloudRequests.WithLabelValues(t.provider, op, code).Inc()
	return resp, err
}
