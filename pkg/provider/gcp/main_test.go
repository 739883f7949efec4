package gcp_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const region = "europe-west1"

// gcs is fake-gcs-server behind the front that plays OAuth and the bucket settings (see
// stack.GCS), shared by the tests of this package.
var gcs *stack.GCS

func TestMain(m *testing.M) {
	var err error
	gcs, err = stack.StartGCS(stack.GCSOptions{ForeignPrefix: "foreign-", ThrottleEvery: 0})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting fake-gcs-server:", err)
		os.Exit(1)
	}
	testProvider.IAMEndpoint = gcs.URL + "/"
	code := m.Run()
	gcs.Stop()
	os.Exit(code)
}

var (
	newBucketName = stack.NewBucketName
	with          = stack.With
	testProvider  = &gcpprovider.Provider{}
)

func newStore(t testing.TB, data map[string][]byte) objectstore.Store {
	t.Helper()
	s, err := testProvider.NewStore(context.Background(), provider.Credentials{Data: data, Region: region}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
