package azure_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// azurite is the Azure Blob stand-in shared by the tests of this package.
var azurite *stack.Azurite

func TestMain(m *testing.M) {
	var err error
	if azurite, err = stack.StartAzurite(); err != nil {
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

func newStore(t testing.TB, data map[string][]byte) objectstore.Store {
	t.Helper()
	return newStoreWith(t, &azureprovider.Provider{}, data)
}

func newStoreWith(t testing.TB, p *azureprovider.Provider, data map[string][]byte) objectstore.Store {
	t.Helper()
	s, err := p.NewStore(context.Background(), provider.Credentials{Data: data, Region: "westeurope"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func providerCreds(data map[string][]byte) provider.Credentials {
	return provider.Credentials{Data: data, Region: "westeurope"}
}
