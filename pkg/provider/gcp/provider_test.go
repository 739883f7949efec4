// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"errors"
	"testing"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// NewIssuer dispatches by name: the config's issuer is the service-account key issuer, with or
// without a config asking for generated credentials (revocation only) and for workload identity
// too; any other name, the empty one included, is a configuration error. A store is never an issuer.
func TestNewIssuerDispatch(t *testing.T) {
	static := provider.Credentials{Data: gcs.SecretData(), Region: region}
	wi := provider.Credentials{Data: map[string][]byte{"config": gcs.WorkloadIdentityConfig("wi-dispatch"), "token": []byte("wi-dispatch"), "storageAPIEndpoint": []byte(gcs.Endpoint)}, WorkloadIdentity: true, Region: region}
	for _, c := range []struct {
		name    string
		creds   provider.Credentials
		cfg     *gcpapi.BackupBucketConfig
		issuer  string
		wantErr error
	}{
		{"the config's issuer", static, generatingConfig(), gcpapi.IssuerServiceAccountKey, nil},
		{"the config's issuer, revocation only", static, nil, gcpapi.IssuerServiceAccountKey, nil},
		{"no name", static, nil, "", objectstore.ErrInvalidConfig},
		{"no name with a config", static, generatingConfig(), "", objectstore.ErrInvalidConfig},
		{"workload identity", wi, generatingConfig(), gcpapi.IssuerServiceAccountKey, nil},
		{"workload identity, no name", wi, nil, "", objectstore.ErrInvalidConfig},
		{"another provider's issuer", static, generatingConfig(), "IAM", objectstore.ErrInvalidConfig},
		{"unknown issuer", static, nil, "serviceaccountkey", objectstore.ErrInvalidConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			iss, err := testProvider.NewIssuer(context.Background(), c.creds, c.cfg, c.issuer)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || iss != nil {
					t.Fatalf("NewIssuer(%q) = %v, %v; want no issuer and %v", c.issuer, iss, err, c.wantErr)
				}
				return
			}
			if err != nil || !gcpprovider.IsServiceAccountKeyIssuer(iss) {
				t.Fatalf("NewIssuer(%q) = %T, %v; want the service-account key issuer", c.issuer, iss, err)
			}
		})
	}
	s, err := testProvider.NewManagement(context.Background(), static, generatingConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(objectstore.CredentialIssuer); ok {
		t.Fatal("a management plane with generatedCredentials is a CredentialIssuer; issuers come from NewIssuer only")
	}
	d, err := testProvider.NewDataPlane(context.Background(), static)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(objectstore.CredentialIssuer); ok {
		t.Fatal("a data plane is a CredentialIssuer; issuers come from NewIssuer only")
	}
}
