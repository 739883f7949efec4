// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// The wrong inputs of a directory store: the harness (test/badinput) checks that each is refused
// with its sentinel, naming its cause, never showing the secret's hostPath, and that the root
// holds the same entries before and after. The rows every provider shares (apiVersion, kind,
// strict decoding, backupFreshness, bucket names no store takes) are badinput.Shared, run on
// every registered API by pkg/provider/all.
func TestBadInputIsRefusedNamingItsCauseAndTouchesNothing(t *testing.T) {
	root := t.TempDir()
	p := &local.Provider{Root: root, HostPath: "/srv/buckets"}
	existing := newBucketName()
	if err := storesOf(t, p).EnsureBucket(context.Background(), objectstore.Bucket{Name: existing}); err != nil {
		t.Fatal(err)
	}
	otherHost := map[string][]byte{local.KeyHostPath: []byte("/var/elsewhere-host-path")}
	etcd := map[string][]byte{local.KeyBucketName: []byte(existing)}
	head := badinput.Head(localapi.Type)

	reconcile := func(p *local.Provider, bucket string) func(*testing.T, map[string][]byte) error {
		return func(_ *testing.T, data map[string][]byte) error {
			m, err := p.NewManagement(context.Background(), credsOf(data), &localapi.BackupBucketConfig{})
			if err != nil {
				return err
			}
			return m.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket})
		}
	}
	deleteEntry := func(bucket string) func(*testing.T, map[string][]byte) error {
		return func(_ *testing.T, data map[string][]byte) error {
			d, err := p.NewDataPlane(context.Background(), credsOf(data))
			if err != nil {
				return err
			}
			return badinput.DeleteEntry(d, bucket)
		}
	}
	writeEtcdBackup := func(_ *testing.T, data map[string][]byte) error {
		_, err := p.EtcdBackupSecretData(&extensionsv1alpha1.BackupEntry{}, data)
		return err
	}

	cases := []badinput.Case{
		badinput.Config(localapi.API, "immutability, which a directory cannot honour", head+"immutability:\n  retentionType: bucket\n", "providerConfig.immutability", "retention lock"),
		badinput.Config(localapi.API, "generated credentials, which a directory has none of", head+"generatedCredentials: {}\n", "providerConfig.generatedCredentials"),
		badinput.Config(localapi.API, "versioning", head+"versioning: true\n", "providerConfig", "versioning"),
		{Name: "secret: hostPath of another directory", Data: otherHost, Run: reconcile(p, newBucketName()), Want: objectstore.ErrInvalidConfig, Names: []string{"hostPath", "--local-host-path"}},
		{Name: "entry deletion: hostPath of another directory", Data: otherHost, Run: deleteEntry(existing), Want: objectstore.ErrInvalidConfig, Names: []string{"hostPath"}},
		{Name: "etcd-backup: hostPath of another directory", Data: badinput.With(etcd, local.KeyHostPath, "/var/elsewhere-host-path"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{"hostPath"}},
		{Name: "etcd-backup: no bucketName", Data: badinput.Without(etcd, local.KeyBucketName), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{"bucketName"}},
		{Name: "etcd-backup: empty bucketName", Data: badinput.With(etcd, local.KeyBucketName, ""), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{"bucketName"}},
		{Name: "no --local-root", Data: map[string][]byte{}, Run: reconcile(&local.Provider{}, newBucketName()), Want: objectstore.ErrInvalidConfig, Names: []string{"--local-root"}},
	}
	for _, n := range []struct{ name, bucket, rule string }{
		{"longer than 255 bytes", strings.Repeat("a", 256), "255"},
		{"a backslash", `backup\bucket`, `"\"`},
		{"a leading dot", ".backup", `"."`},
		{"invalid UTF-8", "backup-\xff", "UTF-8"},
		{"a control character", "backup\nbucket", "control characters"},
	} {
		cases = append(cases,
			badinput.Case{Name: "bucket name: " + n.name, Data: map[string][]byte{}, Run: reconcile(p, n.bucket), Want: objectstore.ErrInvalidConfig, Names: []string{n.rule}},
			badinput.Case{Name: "entry deletion: spec.bucketName " + n.name, Data: map[string][]byte{}, Run: deleteEntry(n.bucket), Want: objectstore.ErrInvalidConfig, Names: []string{n.rule}})
	}

	badinput.Run(t, badinput.Harness{AtLeast: 15,
		State: func(t *testing.T) []string {
			entries, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return slices.Sorted(slices.Values(names))
		},
		Secrets: func(data map[string][]byte) []string { return badinput.Values(data, local.KeyHostPath) },
	}, cases)
}
