// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	rawstorage "google.golang.org/api/storage/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

// entryIssuer is the entry controller's issuer for a config with entryCredentials, built by
// the name the config gives, from the operator's secret data.
func entryIssuer(t *testing.T) objectstore.EntryCredentialIssuer {
	t.Helper()
	cfg := &gcpapi.BackupBucketConfig{EntryCredentials: &credentials.EntrySettings{Issuer: gcpapi.IssuerServiceAccountKey}}
	iss, err := testProvider.NewEntryIssuer(context.Background(), provider.Credentials{Data: gcs.SecretData(), Region: region}, cfg, cfg.EntryCredentialSettings().Issuer)
	if err != nil || iss == nil {
		t.Fatalf("NewEntryIssuer: %v, %v", iss, err)
	}
	return iss
}

func entryPrefix(t *testing.T, name string) objectstore.Prefix {
	t.Helper()
	p, err := objectstore.EntryPrefix(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func entryEmail(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return gcpprovider.EntryServiceAccountID(bucket, prefix, access) + "@" + gcs.ProjectID + ".iam.gserviceaccount.com"
}

// entryFixture is an entry's prefix in a new bucket, the entry issuer, and the read-write
// service account's email.
type entryFixture struct {
	bucket string
	prefix objectstore.Prefix
	rw     objectstore.EntryAccess
	email  string
	iss    objectstore.EntryCredentialIssuer
}

// newEntryFixture creates a bucket for the prefix of the entry name.
func newEntryFixture(t *testing.T, name string) entryFixture {
	t.Helper()
	f := entryFixture{bucket: newBucketName(), prefix: entryPrefix(t, name), rw: objectstore.EntryReadWrite, iss: entryIssuer(t)}
	if err := newStore(t, gcs.SecretData()).EnsureBucket(context.Background(), objectstore.Bucket{Name: f.bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	f.email = entryEmail(f.bucket, f.prefix, f.rw)
	return f
}

// issue issues the read-write credential, the ids in use kept, and fails the test on an error.
func (f entryFixture) issue(t *testing.T, inUse ...string) objectstore.Credential {
	t.Helper()
	c, err := f.iss.IssueEntryCredential(context.Background(), f.bucket, f.prefix, f.rw, inUse)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// retire retires the read-write credentials ids, to end after at.
func (f entryFixture) retire(t *testing.T, at time.Time, ids ...string) {
	t.Helper()
	if err := f.iss.RetireEntryCredentials(context.Background(), f.bucket, f.prefix, f.rw, ids, at); err != nil {
		t.Fatal(err)
	}
}

// clientOf is a storage client with a credential's data, as etcd-backup-restore builds one.
func clientOf(t *testing.T, data map[string][]byte) *storage.Client {
	t.Helper()
	c, _, err := testProvider.NewClient(context.Background(), provider.Credentials{Data: data, Region: region})
	if err != nil {
		t.Fatal(err)
	}
	c.SetRetry(storage.WithPolicy(storage.RetryNever))
	return c
}

func put(ctx context.Context, c *storage.Client, bucket, name string) error {
	w := c.Bucket(bucket).Object(name).NewWriter(ctx)
	if _, err := w.Write([]byte("data of " + name)); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// putResumable writes 600 KiB in chunks of 256 KiB: a resumable upload, whose later requests name
// no object (etcd-backup-restore's chunks of larger snapshots go this way).
func putResumable(ctx context.Context, c *storage.Client, bucket, name string) error {
	w := c.Bucket(bucket).Object(name).NewWriter(ctx)
	w.ChunkSize = 256 << 10
	if _, err := w.Write(make([]byte, 600<<10)); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

func get(ctx context.Context, c *storage.Client, bucket, name string) error {
	r, err := c.Bucket(bucket).Object(name).NewReader(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.ReadAll(r)
	return err
}

func list(ctx context.Context, c *storage.Client, bucket, prefix string) ([]string, error) {
	var names []string
	it := c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix})
	for {
		o, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		names = append(names, o.Name)
	}
}

// forbidden reports GCS's 403: what the store answers a principal without the permission.
func forbidden(err error) bool {
	var apiErr *googleapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusForbidden
}

// TestEntryCredentialReachesOnlyItsManagedFolder issues a key for `shoot--p--uid1/` beside
// `shoot--p--uid10/` and another entry, and asserts every escape refused with 403 and what
// etcd-backup-restore does under its prefix allowed (put, get, list with its prefix, compose,
// delete); a `source-` entry's key only reads.
func TestEntryCredentialReachesOnlyItsManagedFolder(t *testing.T) {
	ctx := context.Background()
	operator := gcs.SecretData()
	s := newStore(t, operator)
	bucket := newBucketName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	own, sibling, other := entryPrefix(t, "shoot--p--uid1"), entryPrefix(t, "shoot--p--uid10"), entryPrefix(t, "shoot--q--x")
	op := clientOf(t, operator)
	for _, name := range []string{own.String() + "etcd-main/v2/Full-1", sibling.String() + "etcd-main/v2/Full-1", other.String() + "etcd-main/v2/Full-1", "top"} {
		if err := put(ctx, op, bucket, name); err != nil {
			t.Fatal(err)
		}
	}
	iss := entryIssuer(t)
	cred, err := iss.IssueEntryCredential(ctx, bucket, own, objectstore.EntryReadWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := iss.CredentialID(cred.Data); got != cred.ID {
		t.Fatalf("CredentialID = %q; want %q", got, cred.ID)
	}
	email := entryEmail(bucket, own, objectstore.EntryReadWrite)
	if got := gcs.ManagedFolderMembers(bucket, own.String(), gcpprovider.EntryRole); !slices.Equal(got, []string{"serviceAccount:" + email}) {
		t.Fatalf("%s on managed folder %s: %v", gcpprovider.EntryRole, own, got)
	}
	if got := gcs.BucketMembers(bucket, gcpprovider.BucketRole); slices.Contains(got, "serviceAccount:"+email) {
		t.Fatal("the entry's account is bound on the bucket")
	}
	c := clientOf(t, cred.Data)
	raw, err := rawstorage.NewService(ctx, option.WithAuthCredentialsJSON(option.ServiceAccount, cred.Data["serviceaccount.json"]), option.WithEndpoint(gcs.Endpoint))
	if err != nil {
		t.Fatal(err)
	}

	// What etcd-backup-restore does under its prefix.
	mine := own.String() + "etcd-main/v2/Incr-1"
	if err := put(ctx, c, bucket, mine+"/0000000001"); err != nil {
		t.Fatalf("put under its prefix: %v", err)
	}
	if _, err := c.Bucket(bucket).Object(mine).ComposerFrom(c.Bucket(bucket).Object(mine + "/0000000001")).Run(ctx); err != nil {
		t.Fatalf("compose under its prefix: %v", err)
	}
	if err := get(ctx, c, bucket, mine); err != nil {
		t.Fatalf("get under its prefix: %v", err)
	}
	if err := putResumable(ctx, c, bucket, own.String()+"large"); err != nil {
		t.Fatalf("resumable upload under its prefix: %v", err)
	}
	if !slices.ContainsFunc(gcs.Requests("/upload/storage/v1/b/"+bucket+"/o"), func(r gcpstack.GCSRequest) bool { return r.Query.Get("upload_id") != "" }) {
		t.Fatal("the resumable upload sent no request naming its upload ID")
	}
	if err := c.Bucket(bucket).Object(own.String() + "large").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{own.String(), own.String() + "etcd-main"} { // the latter is etcd-backup-restore's listing
		if names, err := list(ctx, c, bucket, prefix); err != nil || len(names) != 3 {
			t.Fatalf("listing %q: %v, %v; want its three objects", prefix, names, err)
		}
	}
	if err := c.Bucket(bucket).Object(mine + "/0000000001").Delete(ctx); err != nil {
		t.Fatalf("delete under its prefix: %v", err)
	}

	// Every escape.
	escapes := map[string]func() error{
		"get the sibling's":                 func() error { return get(ctx, c, bucket, sibling.String()+"etcd-main/v2/Full-1") },
		"get another entry's":               func() error { return get(ctx, c, bucket, other.String()+"etcd-main/v2/Full-1") },
		"get at the bucket's root":          func() error { return get(ctx, c, bucket, "top") },
		"put into the sibling":              func() error { return put(ctx, c, bucket, sibling.String()+"x") },
		"put at the bucket's root":          func() error { return put(ctx, c, bucket, "shoot--p--uid1x") },
		"resumable upload into the sibling": func() error { return putResumable(ctx, c, bucket, sibling.String()+"large") },
		"delete the sibling's":              func() error { return c.Bucket(bucket).Object(sibling.String() + "etcd-main/v2/Full-1").Delete(ctx) },
		"delete another entry's":            func() error { return c.Bucket(bucket).Object(other.String() + "etcd-main/v2/Full-1").Delete(ctx) },
		"list with an empty prefix":         func() error { _, err := list(ctx, c, bucket, ""); return err },
		"list the sibling's prefix":         func() error { _, err := list(ctx, c, bucket, sibling.String()); return err },
		"list without the slash":            func() error { _, err := list(ctx, c, bucket, "shoot--p--uid1"); return err },
		"rewrite from the sibling": func() error {
			_, err := c.Bucket(bucket).Object(own.String() + "copied").CopierFrom(c.Bucket(bucket).Object(sibling.String() + "etcd-main/v2/Full-1")).Run(ctx)
			return err
		},
		"compose from the sibling": func() error {
			_, err := c.Bucket(bucket).Object(own.String() + "composed").ComposerFrom(c.Bucket(bucket).Object(sibling.String() + "etcd-main/v2/Full-1")).Run(ctx)
			return err
		},
		"rewrite into the sibling": func() error {
			_, err := c.Bucket(bucket).Object(sibling.String() + "copied").CopierFrom(c.Bucket(bucket).Object(own.String() + "etcd-main/v2/Full-1")).Run(ctx)
			return err
		},
		"read the bucket's metadata": func() error { _, err := c.Bucket(bucket).Attrs(ctx); return err },
		"change the bucket's labels": func() error {
			upd := storage.BucketAttrsToUpdate{}
			upd.SetLabel("owned", "by-an-entry")
			_, err := c.Bucket(bucket).Update(ctx, upd)
			return err
		},
		"read the bucket's IAM policy": func() error { _, err := c.Bucket(bucket).IAM().Policy(ctx); return err },
		"widen its own managed folder's IAM policy": func() error {
			p, err := raw.ManagedFolders.GetIamPolicy(bucket, own.String()).Context(ctx).Do()
			if err != nil {
				return err
			}
			p.Bindings = append(p.Bindings, &rawstorage.PolicyBindings{Role: "roles/storage.objectAdmin", Members: []string{"allUsers"}})
			_, err = raw.ManagedFolders.SetIamPolicy(bucket, own.String(), p).Context(ctx).Do()
			return err
		},
		"delete the bucket": func() error { return c.Bucket(bucket).Delete(ctx) },
	}
	for what, escape := range escapes {
		if err := escape(); !forbidden(err) {
			t.Errorf("%s with the entry's key: %v; want 403", what, err)
		}
	}
	for _, name := range []string{own.String() + "copied", own.String() + "composed", sibling.String() + "copied"} {
		if err := get(ctx, op, bucket, name); !errors.Is(err, storage.ErrObjectNotExist) {
			t.Errorf("%s after the refused copy: %v; want none", name, err)
		}
	}
	for _, name := range []string{sibling.String() + "etcd-main/v2/Full-1", other.String() + "etcd-main/v2/Full-1", "top"} {
		if err := get(ctx, op, bucket, name); err != nil {
			t.Errorf("%s after the refused deletes: %v", name, err)
		}
	}

	// A source- entry's key reads and lists, and changes nothing.
	ro, err := iss.IssueEntryCredential(ctx, bucket, own, objectstore.EntryReadOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gcs.ManagedFolderMembers(bucket, own.String(), gcpprovider.EntryReadRole); !slices.Equal(got, []string{"serviceAccount:" + entryEmail(bucket, own, objectstore.EntryReadOnly)}) {
		t.Fatalf("%s on managed folder %s: %v", gcpprovider.EntryReadRole, own, got)
	}
	rc := clientOf(t, ro.Data)
	if err := get(ctx, rc, bucket, mine); err != nil {
		t.Fatalf("the source- entry's read: %v", err)
	}
	if _, err := list(ctx, rc, bucket, own.String()+"etcd-main"); err != nil {
		t.Fatalf("the source- entry's listing: %v", err)
	}
	if err := put(ctx, rc, bucket, own.String()+"ro"); !forbidden(err) {
		t.Errorf("the source- entry's put: %v; want 403", err)
	}
	if err := rc.Bucket(bucket).Object(mine).Delete(ctx); !forbidden(err) {
		t.Errorf("the source- entry's delete: %v; want 403", err)
	}
	if err := get(ctx, rc, bucket, sibling.String()+"etcd-main/v2/Full-1"); !forbidden(err) {
		t.Errorf("the source- entry's read of the sibling: %v; want 403", err)
	}
	// The entry's own key is unaffected by the source- entry's.
	if ok, err := iss.Owns(ctx, bucket, own, objectstore.EntryReadWrite, cred.ID); err != nil || !ok {
		t.Fatalf("Owns(read-write key) after the read-only issuance: %v, %v", ok, err)
	}
}

// TestEntryCredentialLifecycle: issuance revokes unpublished keys, keeps those in use and those
// retiring before their time; revocation of everything removes the binding, the account and the
// empty managed folder; an account of that ID described otherwise is never taken over; an
// account's limit of keys and the project's limit of service accounts are ErrQuotaExceeded.
func TestEntryCredentialLifecycle(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t, "shoot--l--uid1")
	iss, bucket, prefix, rw, email := f.iss, f.bucket, f.prefix, f.rw, f.email
	first := f.issue(t)
	lost := f.issue(t, first.ID) // issued by a pass that failed before publishing it
	third := f.issue(t, first.ID)
	if got := gcs.ServiceAccountKeyIDs(email); !slices.Equal(got, []string{first.ID, third.ID}) {
		t.Fatalf("keys %v; want %s (in use) and %s, not the unpublished %s", got, first.ID, third.ID, lost.ID)
	}
	if ok, err := iss.Owns(ctx, bucket, prefix, rw, lost.ID); err != nil || ok {
		t.Fatalf("Owns(unpublished key) = %v, %v; want false", ok, err)
	}
	// Retiring: spared by issuance before its time, gone after.
	f.retire(t, time.Now().Add(time.Hour), first.ID)
	fourth := f.issue(t)
	if got := gcs.ServiceAccountKeyIDs(email); !slices.Equal(got, []string{first.ID, fourth.ID}) {
		t.Fatalf("keys %v; want the retiring %s and the new %s", got, first.ID, fourth.ID)
	}
	f.retire(t, time.Now(), fourth.ID)
	if got := gcs.ServiceAccountKeyIDs(email); !slices.Equal(got, []string{first.ID}) {
		t.Fatalf("keys %v after retiring %s at once; want only the retiring %s", got, fourth.ID, first.ID)
	}
	// Revocation of everything: keys, binding, account, and the folder, which holds no objects.
	if err := iss.RevokeEntryCredentials(ctx, bucket, prefix, rw, nil); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(gcs.ServiceAccountEmails(), email) || slices.Contains(gcs.ManagedFolders(bucket), prefix.String()) {
		t.Fatalf("after revoking everything: accounts %v, managed folders %v", gcs.ServiceAccountEmails(), gcs.ManagedFolders(bucket))
	}
	if err := iss.RevokeEntryCredentials(ctx, bucket, prefix, rw, nil); err != nil {
		t.Fatalf("revoking again: %v", err)
	}

	// An account's limit of keys (10): every key in use, the 11th is refused as a quota.
	many := entryPrefix(t, "shoot--l--many")
	var inUse []string
	for range 10 {
		c, err := iss.IssueEntryCredential(ctx, bucket, many, rw, inUse)
		if err != nil {
			t.Fatal(err)
		}
		inUse = append(inUse, c.ID)
	}
	if _, err := iss.IssueEntryCredential(ctx, bucket, many, rw, inUse); !errors.Is(err, objectstore.ErrQuotaExceeded) {
		t.Fatalf("issuing an 11th key in use: %v; want ErrQuotaExceeded", err)
	}
	if err := iss.RevokeEntryCredentials(ctx, bucket, many, rw, nil); err != nil {
		t.Fatal(err)
	}

	// Somebody else's account of that ID.
	foreign := entryPrefix(t, "shoot--l--foreign")
	gcs.CreateServiceAccount(gcpprovider.EntryServiceAccountID(bucket, foreign, rw), "somebody's deployment bot")
	if _, err := iss.IssueEntryCredential(ctx, bucket, foreign, rw, nil); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("issuing over somebody else's account: %v; want ErrOwnedByOther", err)
	}
	if err := iss.RevokeEntryCredentials(ctx, bucket, foreign, rw, nil); err != nil || !slices.Contains(gcs.ServiceAccountEmails(), entryEmail(bucket, foreign, rw)) {
		t.Fatalf("revoking over somebody else's account: %v; it must stay", err)
	}

	// The project's limit of service accounts.
	gcs.SetServiceAccountLimit(len(gcs.ServiceAccountEmails()))
	defer gcs.SetServiceAccountLimit(0)
	_, err := iss.IssueEntryCredential(ctx, bucket, entryPrefix(t, "shoot--l--full"), rw, nil)
	if !errors.Is(err, objectstore.ErrQuotaExceeded) {
		t.Fatalf("issuing at the project's limit of service accounts: %v; want ErrQuotaExceeded", err)
	}
}

// A retired key ends at its time: EndRetiredEntryCredentials reports when, spares it before,
// and deletes it (with its marker) after, leaving the others.
func TestEntryCredentialRetiredEndsAtItsTime(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t, "shoot--r--uid1")
	iss, bucket, prefix, rw, email := f.iss, f.bucket, f.prefix, f.rw, f.email
	retired := f.issue(t)
	published := f.issue(t, retired.ID)
	at := time.Now().Add(5 * time.Second)
	f.retire(t, at, retired.ID)
	next, err := iss.EndRetiredEntryCredentials(ctx, bucket, prefix, rw)
	if err != nil || !next.Equal(time.Unix(at.Unix(), 0)) || !slices.Equal(gcs.ServiceAccountKeyIDs(email), []string{retired.ID, published.ID}) {
		t.Fatalf("before its time: next %v, %v, keys %v; want %v, both keys", next, err, gcs.ServiceAccountKeyIDs(email), at)
	}
	for !time.Now().After(next) {
		time.Sleep(100 * time.Millisecond)
	}
	next, err = iss.EndRetiredEntryCredentials(ctx, bucket, prefix, rw)
	if err != nil || !next.IsZero() || !slices.Equal(gcs.ServiceAccountKeyIDs(email), []string{published.ID}) {
		t.Fatalf("after its time: next %v, %v, keys %v; want none retiring, only %s", next, err, gcs.ServiceAccountKeyIDs(email), published.ID)
	}
	if err := get(ctx, clientOf(t, retired.Data), bucket, prefix.String()+"x"); err == nil {
		t.Fatal("the ended key still reads")
	}
}

// TestEntryIssuerNames: the one issuer by name or none, any other refused.
func TestEntryIssuerNames(t *testing.T) {
	for _, name := range []string{"", gcpapi.IssuerServiceAccountKey} {
		if _, err := testProvider.NewEntryIssuer(context.Background(), provider.Credentials{Data: gcs.SecretData(), Region: region}, nil, name); err != nil {
			t.Errorf("NewEntryIssuer(%q): %v", name, err)
		}
	}
	if _, err := testProvider.NewEntryIssuer(context.Background(), provider.Credentials{Data: gcs.SecretData(), Region: region}, nil, "IAM"); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("NewEntryIssuer(IAM): %v; want ErrInvalidConfig", err)
	}
}

// A pass ends only the keys due in its one listing: the key published just before, which IAM's
// eventually consistent listing does not show yet, stays; a listing missing every key ends none
// and keeps the marker for a later pass, which ends the retired key.
func TestEntryCredentialEndRetiredSparesKeysTheListingLagsOn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hidden int // newest keys the first listing omits
	}{
		{"the published key not listed yet", 1},
		{"no key listed yet", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newEntryFixture(t, "shoot--r--uid1")
			iss, bucket, prefix, rw, email := f.iss, f.bucket, f.prefix, f.rw, f.email
			retired := f.issue(t)
			at := time.Now().Add(time.Second)
			f.retire(t, at, retired.ID)
			published := f.issue(t, retired.ID)
			for !time.Now().After(time.Unix(at.Unix(), 0)) {
				time.Sleep(100 * time.Millisecond)
			}
			gcs.LagKeyListingOnce(email, tc.hidden)
			next, err := iss.EndRetiredEntryCredentials(ctx, bucket, prefix, rw)
			want := []string{published.ID}
			if tc.hidden == 2 {
				want = []string{retired.ID, published.ID}
			}
			if keys := gcs.ServiceAccountKeyIDs(email); err != nil || !slices.Equal(keys, want) || next.IsZero() != (tc.hidden == 1) {
				t.Fatalf("next %v, %v, keys %v; want keys %v, a later pass due (%v)", next, err, keys, want, tc.hidden == 2)
			}
			if tc.hidden == 2 {
				next, err = iss.EndRetiredEntryCredentials(ctx, bucket, prefix, rw)
				if keys := gcs.ServiceAccountKeyIDs(email); err != nil || !next.IsZero() || !slices.Equal(keys, []string{published.ID}) {
					t.Fatalf("the next pass: next %v, %v, keys %v; want only %s, none retiring", next, err, keys, published.ID)
				}
			}
			if err := get(ctx, clientOf(t, published.Data), bucket, prefix.String()+"x"); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
				t.Fatalf("the published key cannot read its prefix: %v", err)
			}
		})
	}
}
