// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

const osConfigHead = `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// The keys etcd-backup-restore's Swift store reads (swift_snapstore.go, readSwiftCredentialDir and
// isSwiftConfigCorrect) with application credentials (never beside a password: the stand-in's
// EtcdBackupKeys are the password's).
var swiftAppCredKeys = []string{"authURL", "domainName", "tenantName", "region", "applicationCredentialID", "applicationCredentialName", "applicationCredentialSecret", "bucketName"}

// openstack beyond the operator's password: an application credential (with a stray username),
// generated application credentials, and an application credential without what the sidecar
// needs, refused.
func init() {
	extras[osprovider.Type] = extra{cases: func(t *testing.T, _ standin.StandIn, w *standin.World, env *framework.Env) {
		openStackExtras(t, w.Handle.(*openstackstack.OpenStack), w.Consumer, env)
	}}
}

func openStackExtras(t *testing.T, cloud *openstackstack.OpenStack, c stack.Consumer, env *framework.Env) {
	ac := applicationCredential(t, cloud)
	// An operator's application credential with everything etcd-backup-restore reads, and a
	// stray username (which the extension would use to authenticate by name): etcd-backup must
	// carry the application credential only.
	operatorAppCred := stack.With(cloud.SecretData("demo"), "password", "",
		"applicationCredentialID", ac.ID, "applicationCredentialName", ac.Name, "applicationCredentialSecret", ac.Secret)

	for _, m := range []mode{
		{name: "operator application credential with a stray username", operator: operatorAppCred, keys: swiftAppCredKeys},
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
			run(t, env, c, m)
		})
	}

	// An application credential given by ID and secret only works for this extension but not
	// for etcd-backup-restore, which also needs domainName, tenantName and the credential's
	// name: the bucket is refused before any shoot depends on it, naming what is missing.
	t.Run("operator application credential without what the sidecar needs", func(t *testing.T) {
		t.Parallel()
		byID := map[string][]byte{"authURL": []byte(cloud.AuthURL), "region": []byte("RegionOne"),
			"applicationCredentialID": []byte(ac.ID), "applicationCredentialSecret": []byte(ac.Secret)}
		operator := env.StoreFor(t, cloud.SecretData("demo"))
		env.BucketsFail(t, []framework.BucketFailure{
			{Name: "by ID only", Data: byID, Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: `"domainName"`},
			{Name: "without the name", Data: stack.With(byID, "domainName", "Default", "tenantName", "demo"), Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: `"applicationCredentialName"`},
		}, []string{ac.Secret}, func(t *testing.T, bucket string) {
			if keys, err := conformance.ListKeys(framework.Ctx(t), operator, bucket, ""); err == nil {
				t.Fatalf("container %s was created (%d objects)", bucket, len(keys))
			}
		})
	})
}

// applicationCredential creates an application credential of the demo user in Keystone.
func applicationCredential(t *testing.T, cloud *openstackstack.OpenStack) *applicationcredentials.ApplicationCredential {
	t.Helper()
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		Username: "demo", Password: "demopass", DomainName: "Default", TenantName: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := pc.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	identity := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(cloud.AuthURL)}
	for attempt := 0; ; attempt++ { // Keystone on sqlite sometimes answers 500 "database is locked"
		ac, err := applicationcredentials.Create(ctx, identity, user.ID, applicationcredentials.CreateOpts{Name: name("consumer-")}).Extract()
		if err == nil {
			return ac
		}
		if attempt == 5 || !gophercloud.ResponseCodeIs(err, http.StatusInternalServerError) {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
