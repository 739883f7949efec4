package consumer_test

import (
	"testing"

	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const osConfigHead = `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// swift is how etcd-druid runs the sidecar for an openstack entry: OPENSTACK_APPLICATION_CREDENTIALS
// at the mounted secret. Nothing else: the sidecar reads Keystone's URL from the secret and takes
// the object-store endpoint from the catalog.
var swift = consumer{storageProvider: "Swift", credentialsEnv: "OPENSTACK_APPLICATION_CREDENTIALS"}

// The keys etcd-backup-restore's Swift store reads (swift_snapstore.go, readSwiftCredentialDir and
// isSwiftConfigCorrect): password credentials or application credentials, never both.
var (
	swiftPasswordKeys = []string{"authURL", "domainName", "tenantName", "region", "username", "password", "bucketName"}
	swiftAppCredKeys  = []string{"authURL", "domainName", "tenantName", "region", "applicationCredentialID", "applicationCredentialName", "applicationCredentialSecret", "bucketName"}
)

func TestOpenStack(t *testing.T) {
	t.Parallel()
	cloud, err := stack.StartOpenStack(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cloud.Stop)
	env, err := framework.Start(&osprovider.Provider{}, "RegionOne")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)

	for _, m := range []mode{
		{name: "operator password", operator: cloud.SecretData("demo"), keys: swiftPasswordKeys},
		{
			name:     "generated application credentials",
			operator: cloud.SecretData("demo"),
			config:   osConfigHead + `,"generatedCredentials":{"rotation":{"gracePeriod":"15s"}}}`,
			// Swift's authtoken middleware caches a token's validation: a revoked credential's
			// token may still pass for a while.
			generated: true, keys: swiftAppCredKeys,
		},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			run(t, env, swift, m)
		})
	}
}
