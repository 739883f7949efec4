// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// generated returns the bucket's generated secret once its credential annotation is want.
func generated(t *testing.T, bb *extensionsv1alpha1.BackupBucket, want string) *corev1.Secret {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		secret, err := env.GeneratedSecret(t, bb.Name)
		if err == nil && secret.Annotations["backup.extensions.gardener.cloud/credential"] == want {
			return secret
		}
		if time.Now().After(deadline) {
			t.Fatalf("generated secret of %s with credential %s not there: %v, annotations %v", bb.Name, want, err, secret.Annotations)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func regenerations(account string) []string {
	var keys []string
	for _, r := range arm.Requests("POST") {
		if strings.Contains(r.Path, "/"+account+"/regeneratekey") {
			keys = append(keys, r.Body)
		}
	}
	return keys
}

func TestServicePrincipalBucketPublishesRotatesAndRevokesAGeneratedKey(t *testing.T) {
	bb := env.CreateBucket(t, framework.UniqueName("sp-"), arm.ServicePrincipal(), "")
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	account := azureprovider.AccountName(bb.Name)
	if ref := bb.Status.GeneratedSecretRef; ref == nil || ref.Namespace != "garden" || ref.Name != "generated-bucket-"+bb.Name {
		t.Fatalf("status.generatedSecretRef = %v; want garden/generated-bucket-%s", ref, bb.Name)
	}
	secret := generated(t, bb, "key1")
	var keys []string
	for k := range secret.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"domain", "emulatorEnabled", "storageAccount", "storageKey"}; !slices.Equal(keys, want) || string(secret.Data["storageKey"]) != arm.Key(account, "key1") {
		t.Fatalf("generated secret keys %v (key1 published: %v); want %v with key1", keys, string(secret.Data["storageKey"]) == arm.Key(account, "key1"), want)
	}

	// Gardener hands the generated secret to every entry of the bucket: it reaches the container.
	shoot := framework.UniqueName("shoot--g--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secret.Data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	data := env.StoreFor(t, secret.Data)
	neighbours := framework.FillEntry(t, data, bb.Name, shoot+"--1/", 300)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, data, bb.Name, neighbours)

	// A requested rotation regenerates key2 and publishes it; key1 stays valid for the grace period.
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	secret = generated(t, bb, "key2")
	if got := regenerations(account); len(got) != 1 || !strings.Contains(got[0], `"key2"`) || string(secret.Data["storageKey"]) != arm.Key(account, "key2") {
		t.Fatalf("after a rotation request: regenerated %v; want key2 regenerated and published", got)
	}
	if secret.Annotations["backup.extensions.gardener.cloud/previous-credential"] != "key1" {
		t.Fatalf("the previous credential is not recorded: %v", secret.Annotations)
	}
	// The same request again, and a new one within the grace period, rotate nothing.
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r2")
	since := time.Now() // Trigger waited for the next second: statuses before it are older
	env.WaitFor(t, bb, time.Minute, "bucket reconciled again", framework.SucceededAfter(since))
	if got := regenerations(account); len(got) != 1 {
		t.Fatalf("a rotation within the grace period regenerated %v; want nothing more (key1 is still in use)", got)
	}
	if !env.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonCredentialPublished, `"key2"`, 30*time.Second) {
		t.Error("no event says that key2 was published")
	}
	if !env.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonRotationWaiting, `"key1" stays valid`, 30*time.Second) {
		t.Error("no event says that the next rotation waits for key1's revocation")
	}

	env.DeleteAndWaitGone(t, bb, time.Minute)
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: "garden", Name: "generated-bucket-" + bb.Name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the generated secret survived its bucket: %v", err)
	}
	if arm.Account(account) != nil || arm.Group(bb.Name) != nil {
		t.Fatal("the storage account or resource group the extension created survived the bucket")
	}
	if containerExists(t, bb.Name) {
		t.Fatal("the container survived the bucket")
	}
}

func TestRotationWithoutGraceRevokesThePreviousKeyAtOnce(t *testing.T) {
	cfg := `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","rotation":{"gracePeriod":"0s"}}`
	bb := env.CreateBucket(t, framework.UniqueName("sp-"), arm.ServicePrincipal(), cfg)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	account := azureprovider.AccountName(bb.Name)
	generated(t, bb, "key1")
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "compromised")
	secret := generated(t, bb, "key2")
	got := regenerations(account)
	if len(got) != 2 || !strings.Contains(got[0], `"key2"`) || !strings.Contains(got[1], `"key1"`) {
		t.Fatalf("regenerated %v; want key2 (published) and then key1 (revoked)", got)
	}
	if _, ok := secret.Annotations["backup.extensions.gardener.cloud/previous-credential"]; ok {
		t.Fatalf("a revoked credential is still recorded as previous: %v", secret.Annotations)
	}
	env.DeleteAndWaitGone(t, bb, time.Minute)
}

func TestManagementPlaneErrorsCarryCodes(t *testing.T) {
	env.BucketsFail(t, []framework.BucketFailure{
		{Name: "wrong client secret", Data: stack.With(arm.ServicePrincipal(), "clientSecret", "wrong-client-secret-value"), Code: gardencorev1beta1.ErrorInfraUnauthenticated, Mentions: "unauthenticated"},
		{Name: "missing subscription", Data: stack.With(arm.ServicePrincipal(), "subscriptionID", ""), Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "subscriptionID"},
		{Name: "unknown sku", Data: arm.ServicePrincipal(), ProviderConfig: `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","storageAccount":{"skuName":"Premium_LRS"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.storageAccount.skuName"},
	}, []string{"wrong-client-secret-value", arm.ClientSecret}, func(t *testing.T, bucket string) {
		if arm.Group(bucket) != nil {
			t.Errorf("a failing bucket created resource group %s", bucket)
		}
	})
}

// TestBucketWhoseAccountIsNotOursFailsAndTouchesNothing: a storage account of the bucket's account
// name that this extension did not create (untagged, in the bucket's resource group) makes both
// the reconcile and the deletion fail with ERR_CONFIGURATION_PROBLEM naming the account, and
// nothing but reads reaches it: no key is listed or regenerated, nothing written or deleted.
func TestBucketWhoseAccountIsNotOursFailsAndTouchesNothing(t *testing.T) {
	name := framework.UniqueName("foreign-")
	account := azureprovider.AccountName(name)
	arm.PutGroup(name, region, nil)
	arm.PutAccount(name, account, region, nil)
	bb := env.CreateBucket(t, name, arm.ServicePrincipal(), "")
	t.Cleanup(func() { env.Forget(t, bb) })
	env.WaitFor(t, bb, time.Minute, "reconcile failing", framework.FailedWith(gardencorev1beta1.ErrorConfigurationProblem))
	if desc := bb.Status.LastError.Description; !strings.Contains(desc, account) || strings.Contains(desc, arm.ClientSecret) {
		t.Fatalf("lastError %q; want the account named, no secret", desc)
	}
	if err := env.K8s.Delete(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, bb, time.Minute, "deletion failing", func(o extensionsv1alpha1.Object) bool {
		op := o.GetExtensionStatus().GetLastOperation()
		return op != nil && op.Type == gardencorev1beta1.LastOperationTypeDelete && framework.FailedWith(gardencorev1beta1.ErrorConfigurationProblem)(o)
	})
	for _, r := range arm.Requests() {
		if strings.Contains(r.Path, "/storageaccounts/"+account) && r.Method != http.MethodGet {
			t.Errorf("a request acted on the account that is not ours: %s %s", r.Method, r.Path)
		}
	}
	if arm.Account(account) == nil {
		t.Fatal("the account that is not ours was deleted")
	}
}
