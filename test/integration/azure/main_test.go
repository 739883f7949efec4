// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package azure_test runs the real azure controllers in a manager against a real kube-apiserver
// and etcd (envtest) and Azurite, driven the way gardenlet drives them.
package azure_test

import (
	"fmt"
	"os"
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

const region = "westeurope"

var (
	env     *framework.Env
	azurite *azurestack.Azurite
	// arm stands in for Microsoft Entra ID and Azure Resource Manager (no emulator exists).
	arm *azurestack.ARM
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if azurite, err = azurestack.StartAzurite(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer azurite.Stop()
	arm = azurestack.StartARM(azurite.StandInEndpoint())
	defer arm.Close()
	if env, err = framework.Start(&azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}, region); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
