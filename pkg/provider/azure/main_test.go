// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// azurite is the Azure Blob stand-in shared by the tests of this package.
var azurite *azurestack.Azurite

func TestMain(m *testing.M) {
	var err error
	if azurite, err = azurestack.StartAzurite(); err != nil {
		fmt.Fprintln(os.Stderr, "starting Azurite:", err)
		os.Exit(1)
	}
	code := m.Run()
	azurite.Stop()
	os.Exit(code)
}

var (
	newBucketName = stack.NewBucketName
	with          = stack.With
)

func newStore(t testing.TB, data map[string][]byte) conformance.Stores {
	t.Helper()
	return newStoreWith(t, &azureprovider.Provider{}, data)
}

// newStoreWith builds the planes and the Writer of p, the management plane with the default
// bucket config.
func newStoreWith(t testing.TB, p *azureprovider.Provider, data map[string][]byte) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: "westeurope"}, &azureapi.BackupBucketConfig{})
}

func providerCreds(data map[string][]byte) provider.Credentials {
	return provider.Credentials{Data: data, Region: "westeurope"}
}

func startARM(t testing.TB) *azurestack.ARM {
	arm := azurestack.StartARM(azurite.StandInEndpoint())
	t.Cleanup(arm.Close)
	return arm
}

// armStore builds a management-plane store against the ARM stand-in.
func armStore(t testing.TB, arm *azurestack.ARM, data map[string][]byte, workloadIdentity bool) conformance.Stores {
	t.Helper()
	return armStoreFor(t, arm, data, workloadIdentity, nil)
}

// armStoreFor builds a management-plane store for buckets with the providerConfig cfg (nil: the
// defaults).
func armStoreFor(t testing.TB, arm *azurestack.ARM, data map[string][]byte, workloadIdentity bool, cfg *azureapi.BackupBucketConfig) conformance.Stores {
	t.Helper()
	if cfg == nil {
		cfg = &azureapi.BackupBucketConfig{}
	}
	p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, WorkloadIdentity: workloadIdentity, Region: "westeurope"}, cfg)
}

func armStoreWith(t testing.TB, p *azureprovider.Provider, data map[string][]byte) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: "westeurope"}, &azureapi.BackupBucketConfig{})
}

// armIssuer builds the account key issuer against the ARM stand-in.
func armIssuer(t testing.TB, arm *azurestack.ARM, data map[string][]byte) objectstore.CredentialIssuer {
	t.Helper()
	p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
	iss, err := p.NewIssuer(context.Background(), provider.Credentials{Data: data, Region: "westeurope"}, &azureapi.BackupBucketConfig{}, azureapi.IssuerAccountKey)
	if err != nil || iss == nil {
		t.Fatalf("NewIssuer: %v, %v", iss, err)
	}
	return iss
}

// standInBlobs reaches Azurite's stand-in account directly, behind the extension's back.
func standInBlobs(t *testing.T) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(azurestack.StandInAccount, azurestack.StandInKeys[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(azurite.StandInEndpoint(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}
