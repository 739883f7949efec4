// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// IssuerHarness describes a store that issues bucket-scoped credentials.
type IssuerHarness struct {
	// Harness is the store with the operator's credentials.
	Harness

	// Issuer is the provider's issuer built from the same credentials.
	Issuer objectstore.CredentialIssuer
	// StoreFor builds a store from the data of an issued credential, as the entry controller
	// and etcd-backup-restore do with the generated secret: its data plane and a Writer (its
	// management plane is not used).
	StoreFor func(t *testing.T, data map[string][]byte) Stores
}

// RunIssuer runs the credential issuer suite: an issued credential does what etcd-backup-restore
// and the entry controller do in its bucket and nothing in another; revocation ends exactly the
// credentials it names; a credential issued but never recorded is invalidated; and a writer that
// always uses the published credential sees no failure through a rotation.
func RunIssuer(t *testing.T, h IssuerHarness) {
	if h.Issuer == nil {
		t.Fatal("no issuer")
	}
	cases := []struct {
		name string
		fn   func(*testing.T, IssuerHarness)
	}{
		{"CredentialRefusedDirectlyOutsideItsBucket", testCredentialRefusedDirectlyOutsideItsBucket},
		{"RevocationEndsOnlyWhatItNames", testRevocationEndsOnlyWhatItNames},
		{"UnrecordedCredentialIsInvalidated", testUnrecordedCredentialIsInvalidated},
		{"RotationNeverInterruptsAWriter", testRotationNeverInterruptsAWriter},
		{"LocationIsStable", testLocationIsStable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

// Refused says whether err is a store's refusal of a credential: unknown (revoked) or not
// allowed there.
func Refused(err error) bool {
	return errors.Is(err, objectstore.ErrForbidden) || errors.Is(err, objectstore.ErrUnauthenticated)
}

func (h IssuerHarness) issue(t *testing.T, bucket string, inUse ...string) objectstore.Credential {
	t.Helper()
	cred, err := h.Issuer.IssueCredential(ctxFor(t), bucket, inUse)
	if err != nil {
		t.Fatalf("IssueCredential(%q, %v): %v", bucket, inUse, err)
	}
	if cred.ID == "" || len(cred.Data) == 0 {
		t.Fatalf("IssueCredential(%q) returned no ID or no data", bucket)
	}
	return cred
}

func (h IssuerHarness) revoke(t *testing.T, bucket string, keep ...string) {
	t.Helper()
	if err := h.Issuer.RevokeCredentials(ctxFor(t), bucket, keep); err != nil {
		t.Fatalf("RevokeCredentials(%q, keep %v): %v", bucket, keep, err)
	}
}

// newIssuerBucket is newBucket whose credentials are revoked at cleanup.
func newIssuerBucket(t *testing.T, h IssuerHarness) string {
	t.Helper()
	name := newBucket(t, h.Harness)
	t.Cleanup(func() { h.revoke(t, name) })
	return name
}

// testCredentialRefusedDirectlyOutsideItsBucket checks the direct requests a credential makes outside
// its bucket; what the store reaches on its own behalf (Swift's copy, symlink and large-object
// sub-requests) is each issuer's CredentialReach to state and its provider's tests to drive.
func testCredentialRefusedDirectlyOutsideItsBucket(t *testing.T, h IssuerHarness) {
	ctx := ctxFor(t)
	mine, other := newIssuerBucket(t, h), newIssuerBucket(t, h)
	if err := h.Store.PutObject(ctx, other, "shoot--x--y--1/keep", []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.PutObject(ctx, mine, "shoot--a--b--10/keep", []byte("neighbour")); err != nil {
		t.Fatal(err)
	}
	scoped := h.StoreFor(t, h.issue(t, mine).Data)
	// What etcd-backup-restore and the entry controller do in the bucket: write, read, list,
	// delete an entry's prefix.
	if err := scoped.PutObject(ctx, mine, "shoot--a--b--1/etcd-main/v2/Full-1", []byte("snapshot")); err != nil {
		t.Fatalf("put in its bucket: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, scoped, mine, "shoot--a--b--1/etcd-main/v2/Full-1"); err != nil || string(got) != "snapshot" {
		t.Fatalf("get in its bucket: %q, %v", got, err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	if res, err := objectstore.DeletePrefix(ctx, scoped, mine, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Deleted == 0 {
		t.Fatalf("deleting its entry: %+v, %v", res, err)
	}
	if keys, err := ListKeys(ctx, h.Store, mine, ""); err != nil || len(keys) != 1 || keys[0] != "shoot--a--b--10/keep" {
		t.Fatalf("after deleting shoot--a--b--1/ the bucket holds %v (%v); want only the neighbour", keys, err)
	}
	// Another bucket: refused, whatever the operation.
	for _, c := range []struct {
		op string
		fn func() error
	}{
		{"put", func() error { return scoped.PutObject(ctx, other, "shoot--a--b--1/x", []byte("x")) }},
		{"get", func() error { _, err := objectstore.ReadObject(ctx, scoped, other, "shoot--x--y--1/keep"); return err }},
		{"list", func() error {
			return scoped.ListObjects(ctx, other, "", func([]objectstore.ObjectVersion) error { return nil })
		}},
		{"delete objects", func() error {
			failed, err := scoped.DeleteObjects(ctx, other, []objectstore.ObjectVersion{{Key: "shoot--x--y--1/keep"}})
			if err == nil && len(failed) == 1 {
				return failed[0].Err
			}
			return err
		}},
		{"delete bucket", func() error { return scoped.DeleteBucket(ctx, other) }},
	} {
		if err := c.fn(); !Refused(err) {
			t.Errorf("%s in another bucket: %v; want ErrForbidden or ErrUnauthenticated", c.op, err)
		}
	}
	if keys, err := ListKeys(ctx, h.Store, other, ""); err != nil || len(keys) != 1 {
		t.Fatalf("the other bucket holds %v (%v); want its one object untouched", keys, err)
	}
}

func testRevocationEndsOnlyWhatItNames(t *testing.T, h IssuerHarness) {
	ctx := ctxFor(t)
	mine, other := newIssuerBucket(t, h), newIssuerBucket(t, h)
	first := h.issue(t, mine)
	second := h.issue(t, mine, first.ID)
	otherCred := h.issue(t, other)
	for i, c := range []objectstore.Credential{first, second} {
		if err := h.StoreFor(t, c.Data).PutObject(ctx, mine, fmt.Sprintf("shoot--a--b--1/both-%d", i), []byte("x")); err != nil {
			t.Fatalf("credential %d of two in use: %v", i+1, err)
		}
	}
	h.revoke(t, mine, second.ID)
	if err := h.StoreFor(t, first.Data).PutObject(ctx, mine, "shoot--a--b--1/revoked", []byte("x")); !Refused(err) {
		t.Fatalf("a revoked credential writes: %v", err)
	}
	if err := h.StoreFor(t, second.Data).PutObject(ctx, mine, "shoot--a--b--1/kept", []byte("x")); err != nil {
		t.Fatalf("the kept credential: %v", err)
	}
	h.revoke(t, mine)
	if err := h.StoreFor(t, second.Data).PutObject(ctx, mine, "shoot--a--b--1/all-revoked", []byte("x")); !Refused(err) {
		t.Fatalf("a credential of a bucket whose credentials are all revoked writes: %v", err)
	}
	if err := h.StoreFor(t, otherCred.Data).PutObject(ctx, other, "shoot--x--y--1/after", []byte("x")); err != nil {
		t.Fatalf("revoking one bucket's credentials broke another bucket's: %v", err)
	}
}

func testUnrecordedCredentialIsInvalidated(t *testing.T, h IssuerHarness) {
	ctx := ctxFor(t)
	bucket := newIssuerBucket(t, h)
	lost := h.issue(t, bucket) // issued by a pass that failed before publishing it
	got := h.issue(t, bucket)
	if got.ID != lost.ID { // a store may hand the same one out again instead
		if err := h.StoreFor(t, lost.Data).PutObject(ctx, bucket, "shoot--a--b--1/lost", []byte("x")); !Refused(err) {
			t.Fatalf("a credential issued but never recorded still writes after the next issue: %v", err)
		}
	}
	if err := h.StoreFor(t, got.Data).PutObject(ctx, bucket, "shoot--a--b--1/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func testRotationNeverInterruptsAWriter(t *testing.T, h IssuerHarness) {
	ctx := ctxFor(t)
	bucket := newIssuerBucket(t, h)
	first := h.issue(t, bucket)
	// The writer uses whatever credential is published, as etcd-backup-restore reading its
	// mounted secret does; it writes until told to stop.
	var published atomic.Pointer[objectstore.Credential]
	published.Store(&first)
	var failures, writes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	defer halt() // also when the test fails half-way: the writer must not outlive it
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w := h.StoreFor(t, published.Load().Data)
			if err := w.PutObject(ctx, bucket, fmt.Sprintf("shoot--w--1/obj-%d", i), []byte("x")); err != nil {
				failures.Add(1)
				t.Logf("write %d failed: %v", i, err)
			}
			writes.Add(1)
		}
	})
	// Each phase lasts until the writer has written a few more objects, however slow the machine.
	more := func(n int64) {
		target := writes.Load() + n
		for deadline := time.Now().Add(time.Minute); writes.Load() < target && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	more(5)
	// Publish the new credential, keep both valid for a while (the grace period), revoke the old.
	second := h.issue(t, bucket, first.ID)
	published.Store(&second)
	more(5)
	h.revoke(t, bucket, second.ID)
	more(5)
	halt()
	if failures.Load() != 0 || writes.Load() < 15 {
		t.Fatalf("%d of %d writes failed through the rotation; want none of at least 15", failures.Load(), writes.Load())
	}
	if err := h.StoreFor(t, first.Data).PutObject(context.Background(), bucket, "shoot--w--1/late", []byte("x")); !Refused(err) {
		t.Fatalf("the revoked credential still writes: %v", err)
	}
}

// testLocationIsStable: the issuer names where its credentials live, the same before and after
// it issues and revokes (the controller records it with each credential and compares it before
// every revocation: a location that wandered would block every revocation).
func testLocationIsStable(t *testing.T, h IssuerHarness) {
	ctx := ctxFor(t)
	before, err := h.Issuer.Location(ctx)
	if err != nil || before == "" {
		t.Fatalf("Location: %q, %v; want where the credentials live", before, err)
	}
	bucket := newIssuerBucket(t, h)
	cred := h.issue(t, bucket)
	h.revoke(t, bucket, cred.ID)
	after, err := h.Issuer.Location(ctx)
	if err != nil || after != before {
		t.Fatalf("Location after issuing and revoking: %q, %v; want %q", after, err, before)
	}
}
