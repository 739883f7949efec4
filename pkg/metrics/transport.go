package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

type operationKey struct{}

// OperationOther labels cloud requests made outside a named store operation (token requests of
// an SDK's own context, for example).
const OperationOther = "other"

// WithOperation names the store operation (list_objects, delete_objects, probe, ...) that the
// cloud requests made with ctx belong to.
func WithOperation(ctx context.Context, operation string) context.Context {
	return context.WithValue(ctx, operationKey{}, operation)
}

// Operation is the store operation ctx was named for, or OperationOther.
func Operation(ctx context.Context) string {
	if op, ok := ctx.Value(operationKey{}).(string); ok {
		return op
	}
	return OperationOther
}

// Transport counts and times every request next sends for provider into CloudRequests and
// CloudRequestDuration, labelled with the operation of the request's context. Every provider
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
	op := Operation(req.Context())
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
