package objectstore_test

import (
	"net/http"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestClassOfStatus(t *testing.T) {
	own := map[int]error{
		http.StatusUnauthorized: objectstore.ErrUnauthenticated, // a class the shared table lacks
		http.StatusNotFound:     objectstore.ErrBucketNotFound,  // a store's own meaning wins
	}
	for _, tc := range []struct {
		name string
		code int
		own  map[int]error
		want error
	}{
		{"forbidden", http.StatusForbidden, nil, objectstore.ErrForbidden},
		{"not found", http.StatusNotFound, nil, objectstore.ErrNotFound},
		{"too many requests", http.StatusTooManyRequests, nil, objectstore.ErrThrottled},
		{"service unavailable", http.StatusServiceUnavailable, nil, objectstore.ErrThrottled},
		{"not implemented", http.StatusNotImplemented, nil, objectstore.ErrUnsupported},
		{"unauthorized is no shared class", http.StatusUnauthorized, nil, nil},
		{"bad request is no shared class", http.StatusBadRequest, nil, nil},
		{"internal server error", http.StatusInternalServerError, nil, nil},
		{"ok", http.StatusOK, nil, nil},
		{"no status", 0, nil, nil},
		{"own class", http.StatusUnauthorized, own, objectstore.ErrUnauthenticated},
		{"own class wins", http.StatusNotFound, own, objectstore.ErrBucketNotFound},
		{"shared class beside own ones", http.StatusForbidden, own, objectstore.ErrForbidden},
		{"neither", http.StatusConflict, own, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := objectstore.ClassOfStatus(tc.code, tc.own); got != tc.want {
				t.Errorf("ClassOfStatus(%d) = %v, want %v", tc.code, got, tc.want)
			}
		})
	}
}
