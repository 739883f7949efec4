// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestCustomerKeyOnReadsAndWrites: with a customer-provided key (SSE-C) in the secret, the data
// plane writes and reads objects with it, on MinIO over TLS (MinIO refuses SSE-C over http);
// every way the key does not fit the object is objectstore.ErrKeyRefused naming the secret keys
// (ERR_CONFIGURATION_PROBLEM), never the key's value, and a missing object stays ErrNotFound.
func TestCustomerKeyOnReadsAndWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tlsMinIO, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1", TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tlsMinIO.Stop()
	newKey := func() string {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		return base64.StdEncoding.EncodeToString(k)
	}
	key := newKey()
	plain := tlsMinIO.SecretData()
	withKey := withData(plain, "sseCustomerKey", key, "sseCustomerAlgorithm", "AES256")
	otherKey := withData(plain, "sseCustomerKey", newKey(), "sseCustomerAlgorithm", "AES256")
	name := newBucketName()
	if err := ensure(t, plain, name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	if err := newStore(t, withKey).PutObject(ctx, name, "encrypted", []byte("with the key")); err != nil {
		t.Fatalf("writing with the key: %v", err)
	}
	// Written without a key: MinIO encrypts it with the bucket's default encryption (SSE-S3).
	if err := newStore(t, plain).PutObject(ctx, name, "unencrypted", []byte("without")); err != nil {
		t.Fatal(err)
	}
	got, err := objectstore.ReadObject(ctx, newStore(t, withKey), name, "encrypted")
	if err != nil || string(got) != "with the key" {
		t.Fatalf("reading with the key: %q, %v", got, err)
	}
	for _, c := range []struct {
		name string
		data map[string][]byte
		key  string
		want error
	}{
		{"written with the key, read without one", plain, "encrypted", objectstore.ErrKeyRefused},
		{"written with the key, read with another", otherKey, "encrypted", objectstore.ErrKeyRefused},
		{"written without a key, read with one", withKey, "unencrypted", objectstore.ErrKeyRefused},
		{"a missing object, read with the key", withKey, "missing", objectstore.ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := objectstore.ReadObject(ctx, newStore(t, c.data), name, c.key)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v; want %v", err, c.want)
			}
			if c.want == objectstore.ErrKeyRefused {
				badinput.WantConfigurationProblem(t, err)
				if !strings.Contains(err.Error(), "sseCustomerKey") {
					t.Errorf("the error does not name the secret key: %v", err)
				}
			}
			for _, v := range c.data {
				if len(v) > 3 && strings.Contains(err.Error(), string(v)) {
					t.Errorf("the error reveals a secret value: %v", err)
				}
			}
		})
	}
}
