// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"errors"
	"testing"

	apicredentials "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestNewIssuerDispatchesByName: every issuer name gets its issuer; an unknown name, the empty
// one included, is a configuration error. No call is made: Keystone is asked on first use.
func TestNewIssuerDispatchesByName(t *testing.T) {
	creds := provider.Credentials{Region: "RegionOne", Data: map[string][]byte{
		KeyAuthURL: []byte("https://keystone.example.com/v3"), KeyDomainName: []byte("Default"), KeyTenantName: []byte("p"),
		KeyUsername: []byte("u"), KeyPassword: []byte("pw"),
	}}
	generating := &osapi.BackupBucketConfig{GeneratedCredentials: &osapi.GeneratedCredentialsConfig{Roles: []string{"member"}}}
	for _, c := range []struct {
		name    string
		cfg     *osapi.BackupBucketConfig
		issuer  string
		want    *osapi.BackupBucketConfig // the issuer's config; nil: none asked for, revocation only
		wantErr error
	}{
		{name: "configured", cfg: generating, issuer: generating.GenerationSettings().Issuer, want: generating},
		{name: "by name, generation switched off (revocation)", cfg: &osapi.BackupBucketConfig{}, issuer: osapi.IssuerApplicationCredential},
		{name: "by name, defaults", cfg: nil, issuer: osapi.IssuerApplicationCredential},
		{name: "no name", cfg: nil, issuer: "", wantErr: objectstore.ErrInvalidConfig},
		{name: "no name, generation on", cfg: generating, issuer: "", wantErr: objectstore.ErrInvalidConfig},
		{name: "another provider's issuer", cfg: generating, issuer: "IAM", wantErr: objectstore.ErrInvalidConfig},
		{name: "wrong case", cfg: generating, issuer: "applicationcredential", wantErr: objectstore.ErrInvalidConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			iss, err := (&Provider{}).NewIssuer(context.Background(), creds, c.cfg, c.issuer)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || iss != nil {
					t.Fatalf("got %v, %v; want no issuer and %v", iss, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ks, ok := iss.(*keystoneIssuer)
			if !ok {
				t.Fatalf("issuer %T; want the Keystone application credential issuer", iss)
			}
			switch {
			case c.want != nil && ks.cfg != c.want:
				t.Fatalf("the issuer does not use the bucket's config")
			case c.want == nil && (ks.cfg == nil || ks.cfg.GeneratedCredentials == nil || len(ks.cfg.GeneratedCredentials.Roles) > 0):
				t.Fatalf("the issuer's config %+v; want one that asks for nothing", ks.cfg)
			}
		})
	}
	if _, err := (&Provider{}).NewIssuer(context.Background(), provider.Credentials{Region: "RegionOne"}, nil, osapi.IssuerApplicationCredential); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("an issuer from an empty secret: %v; want ErrInvalidConfig", err)
	}
}

// TestStoreIsNoIssuer: issuers come from NewIssuer only, never from a type assertion on a store.
func TestStoreIsNoIssuer(t *testing.T) {
	creds := provider.Credentials{Region: "RegionOne", Data: map[string][]byte{
		KeyAuthURL: []byte("https://keystone.example.com/v3"), KeyDomainName: []byte("Default"), KeyTenantName: []byte("p"),
		KeyUsername: []byte("u"), KeyPassword: []byte("pw"),
	}}
	cfg := &osapi.BackupBucketConfig{GeneratedCredentials: &osapi.GeneratedCredentialsConfig{Generation: apicredentials.Generation{AllowPassThrough: true}}}
	data, err := (&Provider{}).NewDataPlane(context.Background(), creds)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := data.(objectstore.CredentialIssuer); ok {
		t.Fatal("the data plane is a credential issuer")
	}
	for _, c := range []*osapi.BackupBucketConfig{{}, cfg} {
		s, err := (&Provider{}).NewManagement(context.Background(), creds, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(objectstore.CredentialIssuer); ok {
			t.Fatalf("the management plane (config %v) is a credential issuer", c)
		}
	}
}
