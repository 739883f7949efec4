// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestEntryCredentialHeadroom: Used counts every service account of the project (another
// party's too, across the list's pages of 100), Limit is the quota the Cloud Quotas API reports
// (the front: the cap it enforces); a quota reported as unlimited (-1) is an error, not a figure.
func TestEntryCredentialHeadroom(t *testing.T) {
	ctx := context.Background()
	iss := entryIssuer(t)

	gcs.SetServiceAccountLimit(0) // the front answers -1, as GCP does for projects it calls unlimited
	if h, err := iss.Headroom(ctx); err == nil || !strings.Contains(err.Error(), "unlimited") {
		t.Fatalf("Headroom with the quota reported as -1 = %+v, %v; want an error saying the quota is not read", h, err)
	}

	before := len(gcs.ServiceAccountEmails())
	for i := range 101 { // another party's accounts, more than a page of the list
		gcs.CreateServiceAccount(fmt.Sprintf("someones-bot-%d-%d", time.Now().UnixNano()%1e6, i), "somebody's deployment bot")
	}
	limit := before + 101 + 7
	gcs.SetServiceAccountLimit(limit)
	defer gcs.SetServiceAccountLimit(0)
	h, err := iss.Headroom(ctx)
	if err != nil || h.Used != before+101 || h.Limit != limit || h.Left() != 7 || h.Unbounded || h.Principals != "service accounts of the project" {
		t.Fatalf("Headroom = %+v (left %d), %v; want %d used of %d, 7 left, of the project's service accounts", h, h.Left(), err, before+101, limit)
	}
}

// TestEntryCredentialSweep: a sweep of bucket b1 removes the account (keys, binding, folder) of a
// force-deleted entry, keeps the live entry's, the read-only one with KeepReadOnly and the
// retiring one with KeepRetiring (its other key deleted), touches nothing of b and b1x (the same
// prefix there) nor an account without this project's exact marks; a sweep refused mid-way
// converges when run again; the bucket's deletion (nothing kept) leaves nothing of b1.
func TestEntryCredentialSweep(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, gcs.SecretData())
	b := newBucketName()
	b1, b1x := b+"1", b+"1x"
	for _, name := range []string{b, b1, b1x} {
		if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: region}); err != nil {
			t.Fatal(err)
		}
	}
	iss := entryIssuer(t)
	rw, ro := objectstore.EntryReadWrite, objectstore.EntryReadOnly
	live, gone, src, away, half := entryPrefix(t, "shoot--s--live"), entryPrefix(t, "shoot--s--gone"), entryPrefix(t, "shoot--s--src"), entryPrefix(t, "shoot--s--away"), entryPrefix(t, "shoot--s--half")
	issue := func(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse ...string) objectstore.Credential {
		t.Helper()
		c, err := iss.IssueEntryCredential(ctx, bucket, prefix, access, inUse)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	issue(b1, live, rw)
	issue(b1, gone, rw)
	issue(b1, src, ro)
	retiring := issue(b1, away, rw)
	if err := iss.RetireEntryCredentials(ctx, b1, away, rw, []string{retiring.ID}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	issue(b1, away, rw, retiring.ID) // the destination's, say; not retiring: the sweep deletes it
	issue(b1, half, rw)
	issue(b, gone, rw)
	issue(b1x, gone, rw)
	// Marked like an entry account of b1, but its ID is not the one those marks give.
	fake := "gbke-0000000000000000000000000"
	gcs.CreateServiceAccount(fake, fmt.Sprintf("etcd backups under %s (%s) of bucket %s (gardener-extension-backup)", gone.String(), rw, b1))
	neighbours := []string{entryEmail(b, gone, rw), entryEmail(b1x, gone, rw), fake + "@" + gcs.ProjectID + ".iam.gserviceaccount.com"}

	has := func(email string) bool { return slices.Contains(gcs.ServiceAccountEmails(), email) }
	wantNeighbours := func(when string) {
		t.Helper()
		for _, e := range neighbours {
			if !has(e) {
				t.Fatalf("%s: %s is gone; the sweep of %s must not touch it", when, e, b1)
			}
		}
		for _, bucket := range []string{b, b1x} {
			if got := gcs.ManagedFolderMembers(bucket, gone.String(), "roles/storage.objectUser"); !slices.Equal(got, []string{"serviceAccount:" + entryEmail(bucket, gone, rw)}) {
				t.Fatalf("%s: the binding on %s of %s is %v", when, gone, bucket, got)
			}
		}
	}

	// A switch-off's sweep, refused when deleting the account of "half" (its keys, binding and
	// folder gone by then): an error, the account left with its marks.
	sweep := objectstore.EntrySweep{Live: []objectstore.Prefix{live}, KeepReadOnly: true, KeepRetiring: true}
	gcs.RefuseOnce(http.MethodDelete, "/v1/projects/"+gcs.ProjectID+"/serviceAccounts/"+entryEmail(b1, half, rw))
	if _, err := iss.SweepEntryCredentials(ctx, b1, sweep); err == nil || !has(entryEmail(b1, half, rw)) {
		t.Fatalf("sweep refused mid-way: %v, account of %s left: %v; want the refusal and the account left", err, half, has(entryEmail(b1, half, rw)))
	}
	kept, err := iss.SweepEntryCredentials(ctx, b1, sweep)
	if err != nil || kept != 3 {
		t.Fatalf("sweep again: kept %d, %v; want 3 (live, read-only, retiring)", kept, err)
	}
	for _, gone := range []string{entryEmail(b1, gone, rw), entryEmail(b1, half, rw)} {
		if has(gone) {
			t.Fatalf("%s survived the sweep", gone)
		}
	}
	for _, p := range []objectstore.Prefix{gone, half} {
		if slices.Contains(gcs.ManagedFolders(b1), p.String()) {
			t.Fatalf("the empty managed folder %s of %s survived the sweep: %v", p, b1, gcs.ManagedFolders(b1))
		}
	}
	for _, e := range []string{entryEmail(b1, live, rw), entryEmail(b1, src, ro), entryEmail(b1, away, rw)} {
		if !has(e) {
			t.Fatalf("%s was swept; the sweep keeps it", e)
		}
	}
	if got := gcs.ServiceAccountKeyIDs(entryEmail(b1, away, rw)); !slices.Equal(got, []string{retiring.ID}) {
		t.Fatalf("keys of the retiring account: %v; want only the retiring %s", got, retiring.ID)
	}
	wantNeighbours("after the switch-off's sweep")

	// The bucket's deletion: nothing kept, nothing of b1 left, the neighbours untouched.
	if kept, err := iss.SweepEntryCredentials(ctx, b1, objectstore.EntrySweep{}); err != nil || kept != 0 {
		t.Fatalf("the deletion's sweep: kept %d, %v; want 0", kept, err)
	}
	for _, e := range gcs.ServiceAccountEmails() {
		for _, p := range []objectstore.Prefix{live, gone, src, away, half} {
			for _, a := range []objectstore.EntryAccess{rw, ro} {
				if e == entryEmail(b1, p, a) {
					t.Fatalf("%s (%s, %s of %s) survived the deletion's sweep", e, p, a, b1)
				}
			}
		}
	}
	if got := gcs.ManagedFolders(b1); len(got) != 0 {
		t.Fatalf("managed folders of %s after the deletion's sweep: %v", b1, got)
	}
	wantNeighbours("after the deletion's sweep")
	if kept, err := iss.SweepEntryCredentials(ctx, b1, objectstore.EntrySweep{}); err != nil || kept != 0 {
		t.Fatalf("sweeping again: kept %d, %v", kept, err)
	}
}
