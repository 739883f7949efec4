// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
)

// maxDeletes is the bulk-delete limit the test cluster advertises: small, so that the suite's
// deletions need many bulk requests.
const maxDeletes = 80

// cloud is real Keystone + Swift shared by the tests of this package.
var cloud *openstackstack.OpenStack

func TestMain(m *testing.M) {
	var err error
	cloud, err = openstackstack.StartOpenStack(maxDeletes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting Keystone and Swift:", err)
		os.Exit(1)
	}
	code := m.Run()
	cloud.Stop()
	os.Exit(code)
}

var newContainerName = stack.NewBucketName

// testProvider lists in small pages, so that the suite crosses page boundaries cheaply.
var testProvider = &osprovider.Provider{ListPageSize: 250}

func newStore(t testing.TB, data map[string][]byte) conformance.Stores {
	t.Helper()
	return newStoreWith(t, testProvider, data)
}

// newStoreWith is newConfiguredStore with the default bucket config.
func newStoreWith(t testing.TB, p *osprovider.Provider, data map[string][]byte) conformance.Stores {
	t.Helper()
	return newConfiguredStore(t, p, data, &osapi.BackupBucketConfig{})
}

// newConfiguredStore is the bucket controller's view: the data plane, the management plane
// built with the bucket's providerConfig, and the tests' Writer.
func newConfiguredStore(t testing.TB, p *osprovider.Provider, data map[string][]byte, cfg *osapi.BackupBucketConfig) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: "RegionOne"}, cfg)
}

var with = stack.With

func errorsIsUnauthenticated(err error) bool { return errors.Is(err, objectstore.ErrUnauthenticated) }
