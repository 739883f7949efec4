package consumer_test

import (
	"testing"

	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The keys etcd-druid reads for the Local storage provider (hostPath: the directory it mounts
// "<bucketName>" of; etcd-backup-restore itself reads no secret).
var localKeys = []string{"bucketName", "hostPath"}

// TestLocal: the bucket is a directory under a temporary root, which the extension writes into
// the etcd-backup secret as hostPath; the sidecar stores under "$HOME/<bucket>" with HOME that
// hostPath, as etcd-druid's mount shows it. Gardener's local setup gives an empty secret.
func TestLocal(t *testing.T) {
	t.Parallel()
	env, err := framework.Start(&localprovider.Provider{Root: t.TempDir()}, "local")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	run(t, env, stack.LocalConsumer, mode{name: "empty secret", operator: map[string][]byte{},
		config: `{"apiVersion":"local.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`, keys: localKeys})
}
