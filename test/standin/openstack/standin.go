// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"testing"

	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// openstack: a real Keystone and Swift (Debian's packages, hack/openstack.sh) on loopback, reached
// as the project demo's member user with a password. Handle is the *openstackstack.OpenStack.
func init() {
	standin.Register(standin.StandIn{
		Type: osprovider.Type, Region: "RegionOne", Tools: []string{"openstack"}, ManifestUploads: true,
		// etcd-backup-restore's Swift store (swift_snapstore.go, readSwiftCredentialDir) with
		// password credentials.
		EtcdBackupKeys: []string{"authURL", "domainName", "tenantName", "region", "username", "password", "bucketName"},
		Start: func(_ context.Context, _ testing.TB, region string) (*standin.World, error) {
			cloud, err := openstackstack.StartOpenStack(0)
			if err != nil {
				return nil, err
			}
			c := framework.Registered(&osprovider.Provider{})
			operator := cloud.SecretData("demo")
			return &standin.World{
				What:     "real OpenStack Swift and Keystone v3 (Debian's packages) on loopback",
				Where:    "Keystone " + cloud.AuthURL + ", project demo",
				Cloud:    c,
				Operator: operator,
				Consumer: openstackstack.SwiftConsumer,
				Describe: standin.Probed(c, operator, region, "Swift container"),
				Handle:   cloud,
				Stop:     cloud.Stop,
			}, nil
		},
	})
}
