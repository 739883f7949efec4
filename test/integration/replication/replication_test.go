// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package replication_test copies an entry's snapshots from every provider's stand-in
// (test/standin: MinIO, fake-gcs-server behind the GCS front, Azurite, Swift and Keystone, a
// directory), read through that provider's DataPlane with the operator's credentials, to a
// second MinIO server with credentials of its own, through the aws provider's streaming put:
// one pair within a type (MinIO to MinIO) and one across types for every other provider. Within
// every stand-in it also copies to another bucket of the same store, once server-side (the
// provider's CopyObject) and once streamed (its PutObjectStream).
package replication_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/all"
)

// second is the copy's store: a MinIO server of its own, shared by the tests of this package.
var second *awsstack.MinIO

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	second, err = awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting MinIO:", err)
		os.Exit(1)
	}
	code := m.Run()
	second.Stop()
	os.Exit(code)
}

const entry = "shoot--p--copy--1"

// content is what the source holds: snapshots of the entry, and what is not to be copied (a key
// that is no snapshot, a neighbouring entry's snapshot).
func content() (snapshots, others map[string][]byte) {
	snapshots = map[string][]byte{entry + "/etcd-main/v2/Full-00000000-00000100-1764392400.gz": bytes.Repeat([]byte("full "), 100000)}
	for i := 1; i <= 20; i++ {
		snapshots[fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d.gz", entry, 100*i+1, 100*i+100, 1764392400+300*i)] = bytes.Repeat([]byte{byte(i)}, 1000*i)
	}
	others = map[string][]byte{
		entry + "/etcd-main/notes":                                    []byte("not a snapshot"),
		entry + "0/etcd-main/v2/Full-00000000-00000100-1764392400.gz": []byte("the neighbour's"),
		"shoot--p--copy--2/etcd-main/v2/Full-00000000-00000100-1.gz":  []byte("another entry's"),
	}
	return snapshots, others
}

func TestCopyFromEveryStandInToAnotherMinIO(t *testing.T) {
	snapshots, others := content()
	for _, si := range standin.All() {
		t.Run(si.Type, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			w, err := si.Start(ctx, t, si.Region)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			creds := provider.Credentials{Data: w.Operator, Region: si.Region}
			var raw []byte
			if w.ProviderConfig != "" {
				raw = []byte(w.ProviderConfig)
			}
			cfg, err := w.Cloud.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			mgmt, err := cfg.NewManagement(ctx, creds)
			if err != nil {
				t.Fatal(err)
			}
			const from = "copy-source"
			if err := mgmt.EnsureBucket(ctx, objectstore.Bucket{Name: from, Region: si.Region}); err != nil {
				t.Fatal(err)
			}
			writer, err := w.Cloud.NewWriter(ctx, creds)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range snapshots {
				if err := writer.PutObject(ctx, from, k, v); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range others {
				if err := writer.PutObject(ctx, from, k, v); err != nil {
					t.Fatal(err)
				}
			}
			src, err := w.Cloud.NewDataPlane(ctx, creds)
			if err != nil {
				t.Fatal(err)
			}
			source := replication.From{Store: src, Bucket: from}

			to := "copy-of-" + si.Type
			if _, err := second.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &to}); err != nil {
				t.Fatal(err)
			}
			dst := destination(t, ctx)
			checkCopy(t, ctx, source, replication.To{Store: dst, Bucket: to}, dst, snapshots, true)

			// Within the stand-in's store: to another bucket, server-side and streamed.
			copier, ok := src.(objectstore.ServerSideCopier)
			if !ok {
				t.Fatalf("the %s data plane (%T) has no CopyObject", si.Type, src)
			}
			within, ok := writer.(objectstore.StreamWriter)
			if !ok {
				t.Fatalf("the %s Writer (%T) has no PutObjectStream", si.Type, writer)
			}
			for _, c := range []struct {
				bucket string
				copier objectstore.ServerSideCopier
			}{{"copy-server-side", copier}, {"copy-streamed", nil}} {
				if err := mgmt.EnsureBucket(ctx, objectstore.Bucket{Name: c.bucket, Region: si.Region}); err != nil {
					t.Fatal(err)
				}
				store := struct {
					objectstore.DataPlane
					objectstore.StreamWriter
				}{src, within}
				t.Run(c.bucket, func(t *testing.T) {
					checkCopy(t, ctx, source, replication.To{Store: store, Bucket: c.bucket, Copier: c.copier}, src, snapshots, false)
				})
			}
		})
	}
}

// checkCopy runs two passes of the copy from to to: the first copies every snapshot, the second
// none; then to's bucket, read through dst, holds exactly the snapshots, byte for byte. guarded:
// every write must have been conditional (a destination with conditional writes).
func checkCopy(t *testing.T, ctx context.Context, from replication.From, to replication.To, dst objectstore.DataPlane, snapshots map[string][]byte, guarded bool) {
	t.Helper()
	prefix, _ := objectstore.EntryPrefix(entry)
	for pass, want := range []int{len(snapshots), 0} {
		// Every snapshot may be copied inside: the test is of each store's CopyObject.
		res, err := replication.Copy(ctx, from, to, prefix, replication.Options{ServerSideMinBytes: -1})
		if err != nil || res.Copied != want || res.Plan.InSync != len(snapshots)-want || !res.Done() || res.Lag != 0 || (guarded && res.Unguarded != 0) {
			t.Fatalf("pass %d: %+v, %v; want %d copied (conditionally: %v), the rest in sync", pass+1, res, err, want, guarded)
		}
		// Offered a copy inside the store, the engine uses it for every snapshot (none streamed).
		if to.Copier != nil && (res.ServerSide != want || res.Streamed != 0) {
			t.Fatalf("pass %d: %d copied inside the store, %d streamed (the store refused: %v); want all %d inside", pass+1, res.ServerSide, res.Streamed, res.ServerSideRefused, want)
		}
	}
	var keys []string
	err := dst.ListObjects(ctx, to.Bucket, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			keys = append(keys, o.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(snapshots))
	for k := range snapshots {
		want = append(want, k)
	}
	slices.Sort(want)
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("the copy holds %v; want exactly the entry's snapshots %v", keys, want)
	}
	for k, v := range snapshots {
		if got, err := objectstore.ReadObject(ctx, dst, to.Bucket, k); err != nil || !bytes.Equal(got, v) {
			t.Errorf("%s: the copy holds %d bytes (%v); want the source's %d", k, len(got), err, len(v))
		}
	}
}

// destination is the second MinIO through the aws provider: its data plane and its streaming put.
func destination(t *testing.T, ctx context.Context) interface {
	objectstore.DataPlane
	objectstore.StreamWriter
	objectstore.ConditionalWriter
} {
	t.Helper()
	creds := provider.Credentials{Data: second.SecretData(), Region: second.Region}
	p := &awsprovider.Provider{}
	d, err := p.NewDataPlane(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	return struct {
		objectstore.DataPlane
		objectstore.StreamWriter
		objectstore.ConditionalWriter
		objectstore.StreamBuffer
	}{d, w.(objectstore.StreamWriter), w.(objectstore.ConditionalWriter), w.(objectstore.StreamBuffer)}
}
