// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"testing"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestNewIssuerDispatch checks which issuer each name gives for each kind of secret. Building an
// issuer makes no request, so no stand-in is needed.
func TestNewIssuerDispatch(t *testing.T) {
	servicePrincipal := map[string][]byte{KeyTenantID: []byte("t"), KeyClientID: []byte("c"), KeyClientSecret: []byte("s"), KeySubscriptionID: []byte("sub")}
	workloadIdentity := map[string][]byte{
		KeyWorkloadIdentityConfig: []byte("apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nclientID: c\ntenantID: t\nsubscriptionID: sub\n"),
		KeyWorkloadIdentityToken:  []byte("token"),
	}
	accountKey := map[string][]byte{KeyStorageAccount: []byte("account1"), KeyStorageKey: []byte("c2VjcmV0")}
	type want int
	const (
		accountKeyIssuerWanted want = iota
		none
		invalid
	)
	cases := []struct {
		name   string
		issuer string
		data   map[string][]byte
		wi     bool
		region string
		cfg    *azureapi.BackupBucketConfig
		want   want
	}{
		{"account key issuer from a service principal", azureapi.IssuerAccountKey, servicePrincipal, false, "westeurope", nil, accountKeyIssuerWanted},
		{"account key issuer from a workload identity", azureapi.IssuerAccountKey, workloadIdentity, true, "westeurope", nil, accountKeyIssuerWanted},
		{"account key issuer with a config", azureapi.IssuerAccountKey, servicePrincipal, false, "westeurope", &azureapi.BackupBucketConfig{}, accountKeyIssuerWanted},
		{"account key secret issues none", azureapi.IssuerAccountKey, accountKey, false, "westeurope", nil, none},
		{"no name, a service principal", "", servicePrincipal, false, "westeurope", nil, invalid},
		{"no name, an account key secret", "", accountKey, false, "westeurope", nil, invalid},
		{"another provider's issuer", "IAM", servicePrincipal, false, "westeurope", nil, invalid},
		{"unknown issuer with an account key secret", "bogus", accountKey, false, "westeurope", nil, invalid},
		{"malformed account key secret", azureapi.IssuerAccountKey, map[string][]byte{KeyStorageAccount: []byte("account1")}, false, "westeurope", nil, invalid},
		{"service principal without a region", azureapi.IssuerAccountKey, servicePrincipal, false, "", nil, invalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			iss, err := (&Provider{}).NewIssuer(context.Background(), provider.Credentials{Data: c.data, WorkloadIdentity: c.wi, Region: c.region}, c.cfg, c.issuer)
			switch c.want {
			case accountKeyIssuerWanted:
				if _, ok := iss.(*accountKeyIssuer); err != nil || !ok {
					t.Fatalf("got %T, %v; want the account key issuer", iss, err)
				}
			case none:
				if iss != nil || err != nil {
					t.Fatalf("got %T, %v; want no issuer and no error", iss, err)
				}
			case invalid:
				if iss != nil || !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("got %T, %v; want ErrInvalidConfig", iss, err)
				}
			}
		})
	}
}
