package aws_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestFailedLockLookupIsNotCachedAsUnlocked: an S3 stand-in (httptest, playing the documented
// DeleteObjects, GetObjectLockConfiguration, GetObjectLegalHold and GetObjectRetention answers)
// refuses a locked key with AccessDenied, as AWS does, and fails the first lock-configuration
// lookup. The key is then a failure that says the lock state is unknown -- and the next batch
// asks again and finds the lock, instead of trusting a cached "not locked".
func TestFailedLockLookupIsNotCachedAsUnlocked(t *testing.T) {
	var lookups atomic.Int64
	until := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/xml")
		switch {
		case r.Method == http.MethodPost && q.Has("delete"):
			_, _ = w.Write([]byte(`<DeleteResult><Error><Key>shoot--a--b--1/k</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>`))
		case q.Has("object-lock"):
			if lookups.Add(1) == 1 {
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>no s3:GetBucketObjectLockConfiguration</Message></Error>`))
				return
			}
			_, _ = w.Write([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`))
		case q.Has("legal-hold"):
			_, _ = w.Write([]byte(`<LegalHold><Status>OFF</Status></LegalHold>`))
		case q.Has("retention"):
			_, _ = w.Write([]byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>` + until + `</RetainUntilDate></Retention>`))
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer srv.Close()
	store := newStore(t, withData(minio.SecretData(), "endpoint", srv.URL))
	objs := []objectstore.ObjectVersion{{Key: "shoot--a--b--1/k"}}

	errs, err := store.DeleteObjects(context.Background(), "bucket", objs)
	if err != nil || len(errs) != 1 {
		t.Fatalf("first batch = %v, %v; want one per-object error", errs, err)
	}
	if errors.Is(errs[0].Err, objectstore.ErrObjectLocked) || !errors.Is(errs[0].Err, objectstore.ErrForbidden) || !strings.Contains(errs[0].Err.Error(), "unknown") {
		t.Fatalf("with the lock lookup failing: %v; want a forbidden failure that says the lock state is unknown", errs[0].Err)
	}
	errs, err = store.DeleteObjects(context.Background(), "bucket", objs)
	var locked *objectstore.LockedError
	if err != nil || len(errs) != 1 || !errors.As(errs[0].Err, &locked) || locked.RetainUntil.IsZero() {
		t.Fatalf("second batch = %v, %v; want the key reported locked (the failed lookup must not be cached)", errs, err)
	}
}
