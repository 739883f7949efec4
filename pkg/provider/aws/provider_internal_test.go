// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// NewIssuer builds the issuer the name asks for, whatever the config asks for (a recorded name
// revokes what it issued); the empty name is the issuer the secret points at; an unknown name is
// a configuration error. Nothing is called: building an issuer makes no request.
func TestNewIssuerDispatchesByName(t *testing.T) {
	awsSecret := map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret"), KeyRegion: []byte("eu-central-1")}
	s3Compatible := map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret"), KeyRegion: []byte("eu-central-1"), KeyEndpoint: []byte("https://minio.example.com:9000")}
	asksFor := func(issuer string) *awsapi.BackupBucketConfig {
		return &awsapi.BackupBucketConfig{GeneratedCredentials: &awsapi.GeneratedCredentialsConfig{Issuer: issuer}}
	}
	iam, minio := fmt.Sprintf("%T", &iamIssuer{}), fmt.Sprintf("%T", &minioIssuer{})
	cases := []struct {
		name   string
		data   map[string][]byte
		cfg    *awsapi.BackupBucketConfig
		issuer string
		want   string // the issuer's type; empty: ErrInvalidConfig
	}{
		{name: "IAM on AWS", data: awsSecret, cfg: asksFor(awsapi.IssuerIAM), issuer: awsapi.IssuerIAM, want: iam},
		{name: "IAM with an endpoint", data: s3Compatible, cfg: asksFor(awsapi.IssuerIAM), issuer: awsapi.IssuerIAM, want: iam},
		{name: "MinIO", data: s3Compatible, cfg: asksFor(awsapi.IssuerMinIO), issuer: awsapi.IssuerMinIO, want: minio},
		{name: "MinIO without an endpoint", data: awsSecret, cfg: asksFor(awsapi.IssuerMinIO), issuer: awsapi.IssuerMinIO},
		{name: "recorded IAM, config asks for MinIO", data: s3Compatible, cfg: asksFor(awsapi.IssuerMinIO), issuer: awsapi.IssuerIAM, want: iam},
		{name: "recorded MinIO, config asks for nothing", data: s3Compatible, cfg: &awsapi.BackupBucketConfig{}, issuer: awsapi.IssuerMinIO, want: minio},
		{name: "recorded IAM, nil config", data: awsSecret, issuer: awsapi.IssuerIAM, want: iam},
		{name: "no name, AWS", data: awsSecret, cfg: &awsapi.BackupBucketConfig{}, issuer: ""},
		{name: "no name, endpoint", data: s3Compatible, cfg: asksFor(awsapi.IssuerMinIO), issuer: ""},
		{name: "unknown", data: s3Compatible, cfg: asksFor(awsapi.IssuerIAM), issuer: "Vault"},
		{name: "wrong case", data: awsSecret, issuer: "iam"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := (&Provider{}).NewIssuer(context.Background(), provider.Credentials{Data: c.data, Region: "eu-central-1"}, c.cfg, c.issuer)
			if c.want == "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || got != nil {
					t.Fatalf("got %T, %v; want no issuer and ErrInvalidConfig", got, err)
				}
				return
			}
			if err != nil || fmt.Sprintf("%T", got) != c.want {
				t.Fatalf("got %T, %v; want %s", got, err, c.want)
			}
		})
	}
}

// NewEntryIssuer builds the entry issuer the name asks for; the empty name names none of AWS's
// two (an entry's settings always name one, validated; a record without one names nothing), and
// it, like every other unknown name, is refused as an entry issuer's name. Nothing is called.
func TestNewEntryIssuerDispatchesByName(t *testing.T) {
	s3Compatible := map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret"), KeyRegion: []byte("eu-central-1"), KeyEndpoint: []byte("https://minio.example.com:9000")}
	cases := []struct {
		issuer string
		want   string // the issuer's type; empty: ErrInvalidConfig naming entry credentials
	}{
		{issuer: awsapi.IssuerIAM, want: fmt.Sprintf("%T", &iamEntryIssuer{})},
		{issuer: awsapi.IssuerMinIO, want: fmt.Sprintf("%T", &minioEntryIssuer{})},
		{issuer: ""},
		{issuer: "Vault"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.issuer), func(t *testing.T) {
			got, err := (&Provider{}).NewEntryIssuer(context.Background(), provider.Credentials{Data: s3Compatible, Region: "eu-central-1"}, &awsapi.BackupBucketConfig{}, c.issuer)
			if c.want == "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || got != nil || !strings.Contains(err.Error(), fmt.Sprintf("unknown issuer %q of entry credentials", c.issuer)) {
					t.Fatalf("got %T, %v; want no issuer and ErrInvalidConfig for an unknown issuer of entry credentials", got, err)
				}
				return
			}
			if err != nil || fmt.Sprintf("%T", got) != c.want {
				t.Fatalf("got %T, %v; want %s", got, err, c.want)
			}
		})
	}
}

// Neither plane is an issuer: the controller asks NewIssuer for one by name.
func TestStoreIsNoIssuer(t *testing.T) {
	creds := provider.Credentials{Data: map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret")}, Region: "eu-central-1"}
	data, err := (&Provider{}).NewDataPlane(context.Background(), creds)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := (&Provider{}).NewManagement(context.Background(), creds, &awsapi.BackupBucketConfig{GeneratedCredentials: &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerIAM}})
	if err != nil {
		t.Fatal(err)
	}
	for _, plane := range []any{data, mgmt} {
		if _, ok := plane.(objectstore.CredentialIssuer); ok {
			t.Fatalf("%T implements objectstore.CredentialIssuer", plane)
		}
	}
}
