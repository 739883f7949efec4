// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

const region = "europe-west1"

// gcs is fake-gcs-server behind the front that plays OAuth and the bucket settings (see
// gcpstack.GCS), shared by the tests of this package.
var gcs *gcpstack.GCS

func TestMain(m *testing.M) {
	var err error
	gcs, err = gcpstack.StartGCS(gcpstack.GCSOptions{ForeignPrefix: "foreign-", ThrottleEvery: 0})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting fake-gcs-server:", err)
		os.Exit(1)
	}
	testProvider.IAMEndpoint = gcs.URL + "/"
	testProvider.QuotasEndpoint = gcs.URL + "/"
	code := m.Run()
	gcs.Stop()
	os.Exit(code)
}

var (
	newBucketName = stack.NewBucketName
	with          = stack.With
	testProvider  = &gcpprovider.Provider{}
)

// storesWith builds the planes and the Writer of testProvider for a secret, the management
// plane with cfg (nil: the defaults).
func storesWith(data map[string][]byte, wi bool, specRegion string, cfg *gcpapi.BackupBucketConfig) (conformance.Stores, error) {
	if cfg == nil {
		cfg = &gcpapi.BackupBucketConfig{}
	}
	return conformance.NewStores(context.Background(), testProvider, provider.Credentials{Data: data, WorkloadIdentity: wi, Region: specRegion}, cfg)
}

// newStore builds the planes and the Writer of testProvider, the management plane with the
// default bucket config.
func newStore(t testing.TB, data map[string][]byte) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, testProvider, provider.Credentials{Data: data, Region: region}, &gcpapi.BackupBucketConfig{})
}
