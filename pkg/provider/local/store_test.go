// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
)

// bucketIn makes a bucket of ours under a fresh root and returns the root, the bucket's name and
// the stores.
func bucketIn(t *testing.T) (string, string, conformance.Stores) {
	t.Helper()
	root := t.TempDir()
	s := storesOf(t, &local.Provider{Root: root})
	name := newBucketName()
	if err := s.EnsureBucket(context.Background(), objectstore.Bucket{Name: name}); err != nil {
		t.Fatal(err)
	}
	return root, name, s
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path, want string) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Fatalf("%s = %q, %v; want %q untouched", path, got, err, want)
	}
}

// TestSymbolicLinksAreNeverFollowed: links out of the bucket and links from one entry into
// another are listed as what they are (a link, deleted as a link), and no read, write or delete
// goes through them.
func TestSymbolicLinksAreNeverFollowed(t *testing.T) {
	ctx := context.Background()
	root, name, s := bucketIn(t)
	bucket := filepath.Join(root, name)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "precious"), "outside")
	write(t, filepath.Join(bucket, "shoot--b--1", "etcd-main", "Full-0"), "other entry")
	write(t, filepath.Join(bucket, "shoot--a--1", "etcd-main", "Full-0"), "mine")
	for link, target := range map[string]string{"out": outside, "file": filepath.Join(outside, "precious"), "neighbour": "../shoot--b--1/etcd-main"} {
		if err := os.Symlink(target, filepath.Join(bucket, "shoot--a--1", link)); err != nil {
			t.Fatal(err)
		}
	}

	keys, err := conformance.ListKeys(ctx, s, name, "shoot--a--1/")
	if want := []string{"shoot--a--1/etcd-main/Full-0", "shoot--a--1/file", "shoot--a--1/neighbour", "shoot--a--1/out"}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("listing = %v, %v; want %v (links listed, never walked)", keys, err, want)
	}
	for _, key := range []string{"shoot--a--1/out/precious", "shoot--a--1/neighbour/Full-0"} {
		objErrs, err := s.DeleteObjects(ctx, name, []objectstore.ObjectVersion{{Key: key}})
		if err != nil || len(objErrs) != 1 || !errors.Is(objErrs[0].Err, objectstore.ErrForbidden) {
			t.Errorf("DeleteObjects(%s) = %v, %v; want one ErrForbidden", key, objErrs, err)
		}
		if _, err := s.OpenObject(ctx, name, key, ""); !errors.Is(err, objectstore.ErrForbidden) {
			t.Errorf("OpenObject(%s) = %v; want ErrForbidden", key, err)
		}
		if err := s.PutObject(ctx, name, key, []byte("x")); !errors.Is(err, objectstore.ErrForbidden) {
			t.Errorf("PutObject(%s) = %v; want ErrForbidden", key, err)
		}
	}
	if _, err := s.OpenObject(ctx, name, "shoot--a--1/file", ""); !errors.Is(err, objectstore.ErrForbidden) {
		t.Errorf("OpenObject of a link = %v; want ErrForbidden", err)
	}
	mustRead(t, filepath.Join(outside, "precious"), "outside")
	mustRead(t, filepath.Join(bucket, "shoot--b--1", "etcd-main", "Full-0"), "other entry")

	prefix, _ := objectstore.EntryPrefix("shoot--a--1")
	if res, err := objectstore.DeletePrefix(ctx, s, name, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done {
		t.Fatalf("DeletePrefix = %+v, %v", res, err)
	}
	mustRead(t, filepath.Join(outside, "precious"), "outside")
	mustRead(t, filepath.Join(bucket, "shoot--b--1", "etcd-main", "Full-0"), "other entry")
	if _, err := os.Lstat(filepath.Join(bucket, "shoot--a--1")); !os.IsNotExist(err) {
		t.Errorf("the emptied entry directory is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bucket, local.MarkerFile)); err != nil {
		t.Errorf("the marker went with the entry: %v", err)
	}
}

// TestABucketThatIsALinkIsForeign: the bucket's own name must be a real directory; a link to a
// directory with a marker is someone else's.
func TestABucketThatIsALinkIsForeign(t *testing.T) {
	ctx := context.Background()
	root, name, s := bucketIn(t)
	if err := os.Symlink(filepath.Join(root, name), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(ctx, "alias"); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("Probe through a link = %v; want ErrOwnedByOther", err)
	}
	if err := s.DeleteBucket(ctx, "alias"); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("DeleteBucket of a link = %v; want ErrOwnedByOther", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "alias")); err != nil {
		t.Fatal("the link was removed")
	}
}

// TestForeignDirectoryIsNeverTouched: without the marker, every operation refuses and changes
// nothing.
func TestForeignDirectoryIsNeverTouched(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := storesOf(t, &local.Provider{Root: root})
	write(t, filepath.Join(root, "theirs", "shoot--a--1", "Full-0"), "theirs")
	prefix, _ := objectstore.EntryPrefix("shoot--a--1")
	if _, err := objectstore.DeletePrefix(ctx, s, "theirs", prefix, objectstore.DeleteOptions{}); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Errorf("DeletePrefix = %v; want ErrOwnedByOther", err)
	}
	for op, err := range map[string]error{
		"EnsureBucket": s.EnsureBucket(ctx, objectstore.Bucket{Name: "theirs"}),
		"DeleteBucket": s.DeleteBucket(ctx, "theirs"),
		"Probe":        s.Probe(ctx, "theirs"),
		"PutObject":    s.PutObject(ctx, "theirs", "k", []byte("x")),
	} {
		if !errors.Is(err, objectstore.ErrOwnedByOther) {
			t.Errorf("%s = %v; want ErrOwnedByOther", op, err)
		}
	}
	mustRead(t, filepath.Join(root, "theirs", "shoot--a--1", "Full-0"), "theirs")
	if entries, _ := os.ReadDir(filepath.Join(root, "theirs")); len(entries) != 1 {
		t.Errorf("the foreign directory holds %d entries; want its one", len(entries))
	}
}

// TestKeysAndNamesThatWouldLeaveTheirPlaceAreRefused: no key climbs out, none is the marker; no
// bucket name is a path or hidden.
func TestKeysAndNamesThatWouldLeaveTheirPlaceAreRefused(t *testing.T) {
	ctx := context.Background()
	_, name, s := bucketIn(t)
	for _, key := range []string{"", "/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "a/", local.MarkerFile, "a\x00b"} {
		if err := s.PutObject(ctx, name, key, []byte("x")); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("PutObject(%q) = %v; want ErrInvalidConfig", key, err)
		}
		objErrs, err := s.DeleteObjects(ctx, name, []objectstore.ObjectVersion{{Key: key}})
		if err != nil || len(objErrs) != 1 || !errors.Is(objErrs[0].Err, objectstore.ErrInvalidConfig) {
			t.Errorf("DeleteObjects(%q) = %v, %v; want one ErrInvalidConfig", key, objErrs, err)
		}
	}
	for _, bucket := range []string{"", ".", "..", ".hidden", "a/b", "../x", strings.Repeat("b", 256), "tab\tname"} {
		err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket})
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "naming rules") {
			t.Errorf("EnsureBucket(%q) = %v; want ErrInvalidConfig naming the rule", bucket, err)
		}
	}
}

func TestIssuerAndSecret(t *testing.T) {
	ctx := context.Background()
	p := &local.Provider{Root: "/var/buckets", HostPath: "/etc/gardener/local-backupbuckets"}
	if is, err := p.NewIssuer(ctx, credsOf(nil), &localapi.BackupBucketConfig{}, ""); is != nil || !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("NewIssuer(\"\") = %v, %v; want ErrInvalidConfig", is, err)
	}
	if _, err := p.NewIssuer(ctx, credsOf(nil), &localapi.BackupBucketConfig{}, "IAM"); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("NewIssuer(IAM) = %v; want ErrInvalidConfig", err)
	}
	data, err := p.EtcdBackupSecretData(nil, map[string][]byte{"bucketName": []byte("b1")})
	if err != nil || len(data) != 2 || string(data["hostPath"]) != p.HostPath || string(data["bucketName"]) != "b1" {
		t.Errorf("etcd-backup = %v, %v; want exactly bucketName and the host path", data, err)
	}
	if _, err := p.EtcdBackupSecretData(nil, map[string][]byte{}); !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "bucketName") {
		t.Errorf("etcd-backup without bucketName: %v", err)
	}
	other := map[string][]byte{"hostPath": []byte("/somewhere/secret-place")}
	for what, err := range map[string]error{
		"data plane": func() error { _, err := p.NewDataPlane(ctx, credsOf(other)); return err }(),
		"etcd-backup": func() error {
			_, err := p.EtcdBackupSecretData(nil, map[string][]byte{"bucketName": []byte("b1"), "hostPath": other["hostPath"]})
			return err
		}(),
	} {
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "hostPath") || strings.Contains(err.Error(), "secret-place") {
			t.Errorf("%s with another hostPath: %v; want ErrInvalidConfig naming the key, not the value", what, err)
		}
	}
	if _, err := (&local.Provider{Root: "relative"}).NewDataPlane(ctx, credsOf(nil)); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("a relative root: %v; want ErrInvalidConfig", err)
	}
}
