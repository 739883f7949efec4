// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestLongBodiesAreReadWhileTheyFlow: the GET of a snapshot whose body flows for several times
// the request timeout (a streamed copy or a drill of a large snapshot) reads it whole; a body
// that stops fails with httpclient.ErrStalled within the timeout, not the caller's deadline.
// MinIO behind a proxy that passes GET bodies on in chunks, with a pause before each.
func TestLongBodiesAreReadWhileTheyFlow(t *testing.T) {
	ctx := context.Background()
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	const key, size = "shoot--a--b--1/etcd-main/v2/Full-00000000-00000001-1", 1 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := newStore(t, minio.SecretData()).PutObject(ctx, name, key, data); err != nil {
		t.Fatal(err)
	}
	// 32 chunks of 32 KiB, 100 ms apart: more than three times the request timeout.
	const timeout = time.Second
	p := &awsprovider.Provider{RequestTimeout: timeout}

	read := func(t *testing.T, o stack.TrickleOptions) ([]byte, error) {
		proxy, err := stack.StartTrickle(minio.Endpoint, o)
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		guard, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		s := newStoreWith(t, p, withData(minio.SecretData(), "endpoint", proxy.URL), nil)
		r, err := s.OpenObject(guard, name, key, "")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if guard.Err() != nil {
			t.Fatalf("the test's guard ended the read, not the request timeout: %v", err)
		}
		return got, err
	}

	t.Run("flowing", func(t *testing.T) {
		got, err := read(t, stack.TrickleOptions{Chunk: 32 << 10, Every: 100 * time.Millisecond})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d of %d bytes: %v", len(got), size, err)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		got, err := read(t, stack.TrickleOptions{Chunk: 32 << 10, Every: 100 * time.Millisecond, StopAfter: 64 << 10})
		if !errors.Is(err, httpclient.ErrStalled) || !errors.Is(err, objectstore.ErrUnreachable) {
			t.Fatalf("read %d bytes, error %v; want ErrStalled (ErrUnreachable)", len(got), err)
		}
	})
}
