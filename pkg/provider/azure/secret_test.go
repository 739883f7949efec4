// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

func TestSecretErrorsNameTheKeyAndHideTheValue(t *testing.T) {
	good := map[string][]byte{"storageAccount": []byte("account1"), "storageKey": []byte("c2VjcmV0LWdhcmJhZ2U=")}
	cases := []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no account", with(good, "storageAccount", ""), `"storageAccount"`},
		{"no key", with(good, "storageKey", ""), `"storageKey"`},
		{"upper-case account", with(good, "storageAccount", "Account1"), "3 to 24 lowercase"},
		{"key not base64", with(good, "storageKey", "secret-garbage!"), "not a valid account key"},
		{"domain with a path", with(good, "domain", "blob.core.windows.net/x"), `"domain"`},
		{"emulator switch not a bool", with(good, "emulatorEnabled", "yes"), `"emulatorEnabled"`},
		{"emulator without domain", with(good, "emulatorEnabled", "true"), "host:port of the emulator"},
		{"emulator on a remote host", with(with(good, "emulatorEnabled", "true"), "domain", "blob.example.com:10000"), "loopback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := (&azureprovider.Provider{}).NewDataPlane(context.Background(), provider.Credentials{Data: c.data})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig mentioning %s", err, c.want)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "secret-garbage") {
				t.Fatalf("the error leaks the key: %v", err)
			}
		})
	}
}

func TestEtcdBackupSecretData(t *testing.T) {
	data := with(azurite.SecretData(), "bucketName", "geb-bucket", "stray.json", "{}", "tenantID", "t", "lifecycleDeferral", "true")
	out, err := (&azureprovider.Provider{}).EtcdBackupSecretData(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"bucketName", "domain", "storageAccount", "storageKey"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v; want exactly %v", keys, want)
	}
}

func TestWrongKeyIsRefused(t *testing.T) {
	// A well-formed key that is not the account's. Azure answers 403 AuthenticationFailed
	// (ErrUnauthenticated); Azurite answers 403 AuthorizationFailure, which is ErrForbidden.
	s := newStore(t, with(azurite.SecretData(), "storageKey", "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="))
	err := s.EnsureBucket(context.Background(), objectstore.Bucket{Name: newBucketName()})
	if !errors.Is(err, objectstore.ErrForbidden) && !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("EnsureBucket with a wrong key: %v; want a refusal", err)
	}
	if strings.Contains(err.Error(), "d3Jvbmc") {
		t.Fatalf("the error leaks the key: %v", err)
	}
}
