// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// incumbentPolicy is the management policy gardener-extension-provider-azure v1.62.1 writes
// (pkg/azure/client/managementpolicies.go:31-65, called with daysAfterCreation 0 from
// pkg/controller/backupbucket/actuator.go:90), as ARM returns it.
func incumbentPolicy() map[string]any {
	return map[string]any{"properties": map[string]any{"policy": map[string]any{"rules": []any{map[string]any{
		"name": "delete-backupentry", "type": "Lifecycle", "enabled": true,
		"definition": map[string]any{
			"actions": map[string]any{"baseBlob": map[string]any{"delete": map[string]any{"daysAfterCreationGreaterThan": 0.0}}},
			"filters": map[string]any{"blobTypes": []any{"blockBlob"}, "prefixMatch": []any{""},
				"blobIndexMatch": []any{map[string]any{"name": "blob-marked-for-deletion", "op": "==", "value": "true"}}},
		},
	}}}}}
}

// incumbentBucket creates what provider-azure v1.62.1 leaves for a bucket, exactly as its code
// creates it: the resource group named after the bucket, untagged (backupbucket.go:42, 50-52);
// the account "bkp"+15 hex of SHA-256(name) in it, untagged (backupbucket.go:29-32, 78); the
// container (actuator.go:108); its one-rule management policy (actuator.go:90); snapshots of a
// live shoot and of a deleted entry whose locked blobs it tagged blob-marked-for-deletion=true,
// replacing their tags (pkg/azure/client/storage.go:142-147). The container is locked.
func incumbentBucket(t *testing.T) (arm *azurestack.ARM, blobs *azurestack.BlobStandIn, c *container.Client, bucket string) {
	t.Helper()
	blobs = azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm = azurestack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	bucket = newBucketName()
	acct := azureprovider.IncumbentAccountName(bucket)
	arm.PutGroup(bucket, "westeurope", nil)
	arm.PutAccount(bucket, acct, "westeurope", nil)
	arm.PutContainer(acct, bucket)
	arm.PutLifecycle(acct, incumbentPolicy())
	c = containerOn(t, blobs, bucket)
	if _, err := c.Create(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"shoot--a--b--1/etcd-main/v2/Full-1", "shoot--a--b--1/etcd-main/v2/Incr-2", "shoot--c--d--1/etcd-main/v2/Full-1", "shoot--c--d--1/etcd-main/v2/Incr-2"} {
		if _, err := c.NewBlockBlobClient(k).UploadBuffer(ctx(t), []byte("snapshot "+k), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"shoot--a--b--1/etcd-main/v2/Full-1", "shoot--a--b--1/etcd-main/v2/Incr-2"} {
		if _, err := c.NewBlobClient(k).SetTags(ctx(t), map[string]string{azureprovider.IncumbentTag: "true"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	blobs.LockContainer(azurestack.StandInAccount, bucket, true)
	return arm, blobs, c, bucket
}

func ruleNames(policy map[string]any) []string {
	var names []string
	if policy == nil {
		return nil
	}
	for _, r := range policy["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	return names
}

func regenerations(arm *azurestack.ARM) int {
	n := 0
	for _, r := range arm.Requests("POST") {
		if strings.HasSuffix(strings.ToLower(r.Path), "/regeneratekey") {
			n++
		}
	}
	return n
}

// TestTakeoverAndHandBack: the incumbent's account is adopted (tagged, never re-created, no
// second account beside it, no key regenerated), its deferral rule kept while the account is
// ours, an entry it deferred is deleted by this extension's path with the account key only,
// every object survives, the first generated credential is the key the incumbent published;
// handBack then leaves the incumbent's policy form, read back, and no record of ours.
func TestTakeoverAndHandBack(t *testing.T) {
	arm, blobs, c, bucket := incumbentBucket(t)
	acct := azureprovider.IncumbentAccountName(bucket)
	incumbentSecret := map[string][]byte{"storageAccount": []byte(acct), "storageKey": []byte(arm.Key(acct, "key1")), "domain": []byte(blobs.Host())}
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	for range 2 { // converges, then stays
		if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
	}
	if a := arm.Account(azureprovider.AccountName(bucket)); a != nil {
		t.Fatalf("a second account %s was created beside the incumbent's", azureprovider.AccountName(bucket))
	}
	tags := arm.Account(acct)["tags"].(map[string]any)
	if tags[azureprovider.TagAdoptedFrom] != azureprovider.AdoptedFromIncumbent || tags[azureprovider.TagBucket] != bucket {
		t.Fatalf("tags of the incumbent's account after the takeover: %v; want it adopted", tags)
	}
	if got := ruleNames(arm.Lifecycle(acct)); len(got) != 2 || got[0] != azureprovider.IncumbentRule || got[1] != azureprovider.DeferredDeletionRule {
		t.Fatalf("rules after the takeover %v; want the incumbent's kept beside ours", got)
	}
	if n := regenerations(arm); n != 0 {
		t.Fatalf("%d keys regenerated by the takeover", n)
	}
	iss := armIssuer(t, arm, arm.ServicePrincipal())
	cred, err := iss.IssueCredential(ctx(t), bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in's accounts all have the blob stand-in's account as their data plane, whose name
	// the published secret carries (on Azure: the account's own name).
	if string(cred.Data["storageAccount"]) != azurestack.StandInAccount || cred.ID != "key1" || string(cred.Data["storageKey"]) != string(incumbentSecret["storageKey"]) || regenerations(arm) != 0 {
		t.Fatalf("first generated credential names account %s (key the incumbent published: %v); want the incumbent's account and key, nothing regenerated",
			cred.Data["storageAccount"], string(cred.Data["storageKey"]) == string(incumbentSecret["storageKey"]))
	}

	// The entry the incumbent deferred, deleted by this extension's path with the key only.
	entry := newStore(t, standInKey(blobs))
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx(t), entry, bucket, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("DeletePrefix = %+v, %v; want done with the 2 locked", res, err)
	}
	if _, err := entry.DeferDeletion(ctx(t), bucket, prefix.String()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"shoot--a--b--1/etcd-main/v2/Full-1", "shoot--a--b--1/etcd-main/v2/Incr-2"} {
		if got := blobs.Tags(azurestack.StandInAccount, bucket, k)["current"]; !maps.Equal(got, map[string]string{azureprovider.IncumbentTag: "true", azureprovider.DeferredDeletionTag: "true"}) {
			t.Errorf("tags of %s: %v; want both markers", k, got)
		}
	}
	keys, err := listKeys(t, entry, bucket)
	if err != nil || len(keys) != 4 {
		t.Fatalf("objects after the takeover: %v, %v; want all 4", keys, err)
	}

	// Hand back.
	hb := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{HandBack: true})
	if err := hb.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	got := arm.Lifecycle(acct)
	rule := got["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)
	want := incumbentPolicy()["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)
	if len(rule) != 1 || !equalJSON(rule[0], want[0]) {
		t.Fatalf("policy after the hand-back %v; want exactly the incumbent's %v", rule, want)
	}
	for k := range metadata(t, c) {
		if strings.HasPrefix(k, "gardenerbackupdeferral") {
			t.Fatalf("deferral record %s left after the hand-back", k)
		}
	}
	if _, err := entry.DeferDeletion(ctx(t), bucket, prefix.String()); !errors.Is(err, objectstore.ErrUnsupported) {
		t.Fatalf("a key-only deferral after the hand-back: %v; want it refused (no record)", err)
	}
	if keys, err := listKeys(t, entry, bucket); err != nil || len(keys) != 4 {
		t.Fatalf("objects after the hand-back: %v, %v; want all 4", keys, err)
	}
}

// TestLookAlikesOfTheIncumbentsAccountStayForeign: an account under the incumbent's name with
// somebody else's tags is refused and untouched; one in another resource group is not the
// bucket's (ours is created beside nothing of the bucket's) and untouched; handBack on an
// account this extension created is a configuration error.
func TestLookAlikesOfTheIncumbentsAccountStayForeign(t *testing.T) {
	t.Run("someone else's tags", func(t *testing.T) {
		arm := startARM(t)
		bucket := newBucketName()
		acct := azureprovider.IncumbentAccountName(bucket)
		arm.PutGroup(bucket, "westeurope", nil)
		arm.PutAccount(bucket, acct, "westeurope", map[string]string{"owner": "team-x"})
		err := armStore(t, arm, arm.ServicePrincipal(), false).EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"})
		if !errors.Is(err, objectstore.ErrOwnedByOther) {
			t.Fatalf("EnsureBucket beside a tagged look-alike: %v; want ErrOwnedByOther", err)
		}
		if tags := arm.Account(acct)["tags"].(map[string]any); len(tags) != 1 || tags["owner"] != "team-x" {
			t.Fatalf("the look-alike's tags became %v", tags)
		}
		if arm.Account(azureprovider.AccountName(bucket)) != nil || arm.Lifecycle(acct) != nil {
			t.Fatal("an account was created or a policy written beside the look-alike")
		}
	})
	t.Run("another resource group", func(t *testing.T) {
		arm := startARM(t)
		bucket := newBucketName()
		acct := azureprovider.IncumbentAccountName(bucket)
		arm.PutAccount("someone-elses-group", acct, "westeurope", nil)
		if err := armStore(t, arm, arm.ServicePrincipal(), false).EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
		if tags, _ := arm.Account(acct)["tags"].(map[string]any); len(tags) != 0 || arm.Lifecycle(acct) != nil {
			t.Fatalf("the account in another group was touched: tags %v", tags)
		}
		if arm.Account(azureprovider.AccountName(bucket)) == nil {
			t.Fatal("the bucket's own account was not created")
		}
	})
	t.Run("handBack on an account of ours", func(t *testing.T) {
		arm := startARM(t)
		bucket := newBucketName()
		err := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{HandBack: true}).EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"})
		var wait *objectstore.HandBackWaitError
		if !errors.As(err, &wait) || !wait.ByOperator || errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "providerConfig.handBack") {
			t.Fatalf("handBack on an account this extension created: %v; want a HandBackWaitError (by the operator, no configuration error) naming the field", err)
		}
	})
}

// TestRefusedTakeoverLeavesTheIncumbentsAccountAlone: a reconcile that refuses the bucket (the
// incumbent's account is in another region than spec.region; the declared immutability would
// shorten or remove the container's locked policy) refuses before it adopts: the account keeps
// no tag of ours (it would be deleted with the bucket as ours), and nothing else is written to
// it. Until issue 36 the account was tagged adopted before the region was compared.
func TestRefusedTakeoverLeavesTheIncumbentsAccountAlone(t *testing.T) {
	cases := []struct {
		name   string
		region string
		policy int // days of a locked immutability policy on the container; 0: none
		cfg    *azureapi.BackupBucketConfig
		want   string
	}{
		{name: "another region", region: "northeurope", want: "spec.region"},
		{name: "a locked policy not declared", region: "westeurope", policy: 3, cfg: &azureapi.BackupBucketConfig{}, want: "providerConfig.immutability"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arm := startARM(t)
			bucket := newBucketName()
			acct := azureprovider.IncumbentAccountName(bucket)
			arm.PutGroup(bucket, "westeurope", nil)
			arm.PutAccount(bucket, acct, "westeurope", nil)
			arm.PutContainer(acct, bucket)
			arm.PutLifecycle(acct, incumbentPolicy())
			if c.policy > 0 {
				arm.PutImmutabilityPolicy(acct, bucket, c.policy, true)
			}
			writes := arm.Writes()
			err := armStoreFor(t, arm, arm.ServicePrincipal(), false, c.cfg).EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: c.region})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("EnsureBucket: %v; want a configuration error naming %s", err, c.want)
			}
			if tags, _ := arm.Account(acct)["tags"].(map[string]any); len(tags) != 0 {
				t.Fatalf("the refused incumbent's account was tagged %v", tags)
			}
			if n := arm.Writes() - writes; n != 0 {
				t.Fatalf("%d writes to ARM by a refused reconcile; want none", n)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func listKeys(t *testing.T, s conformance.Stores, bucket string) ([]string, error) {
	t.Helper()
	return conformance.ListKeys(ctx(t), s, bucket, "")
}
