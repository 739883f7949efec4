// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package openstack_test runs the real openstack controllers in a manager against a real
// kube-apiserver and etcd (envtest) and real Keystone + Swift, driven as gardenlet drives them.
package openstack_test

import (
	"fmt"
	"os"
	"testing"

	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
)

const (
	region = "RegionOne"
	// maxDeletes is the bulk-delete limit the test cluster advertises: small, so that deleting
	// an entry takes many bulk requests.
	maxDeletes = 50
)

var (
	env   *framework.Env
	cloud *openstackstack.OpenStack
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if cloud, err = openstackstack.StartOpenStack(maxDeletes); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cloud.Stop()
	if env, err = framework.Start(&osprovider.Provider{}, region); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
