package azure_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// armStore builds a management-plane store against the ARM stand-in.
func armStore(t testing.TB, arm *stack.ARM, data map[string][]byte, workloadIdentity bool) objectstore.Store {
	t.Helper()
	return armStoreFor(t, arm, data, workloadIdentity, nil)
}

// armStoreFor builds a management-plane store for buckets with the providerConfig cfg.
func armStoreFor(t testing.TB, arm *stack.ARM, data map[string][]byte, workloadIdentity bool, cfg *azureapi.BackupBucketConfig) objectstore.Store {
	t.Helper()
	p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
	s, err := p.NewStore(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: workloadIdentity, Region: "westeurope"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// armIssuer builds the account key issuer against the ARM stand-in.
func armIssuer(t testing.TB, arm *stack.ARM, data map[string][]byte) objectstore.CredentialIssuer {
	t.Helper()
	p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
	iss, err := p.NewIssuer(context.Background(), provider.Credentials{Data: data, Region: "westeurope"}, nil, azureapi.IssuerAccountKey)
	if err != nil || iss == nil {
		t.Fatalf("NewIssuer: %v, %v", iss, err)
	}
	return iss
}

func startARM(t testing.TB) *stack.ARM {
	arm := stack.StartARM(azurite.StandInEndpoint())
	t.Cleanup(arm.Close)
	return arm
}

func TestConformanceThroughTheManagementPlane(t *testing.T) {
	arm := startARM(t)
	conformance.Run(t, conformance.Harness{
		Store:          armStoreWith(t, &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: azuritePages}, arm.ServicePrincipal()),
		SmallPages:     armStoreWith(t, &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: 3}, arm.ServicePrincipal()),
		NewBucketName:  newBucketName,
		Region:         "westeurope",
		OtherRegion:    "northeurope",
		BadCredentials: armStore(t, arm, with(arm.ServicePrincipal(), "clientSecret", "wrong-secret"), false),
		ForeignBucket: func(t *testing.T) string {
			name := newBucketName()
			arm.PutAccount("someone-elses-group", azureprovider.AccountName(name), "westeurope", nil)
			return name
		},
		ManyObjects: 1200,
		// No Versioning: Azurite has none; see TestConformanceThroughTheManagementPlaneWithBlobVersioning.
	})
}

// TestConformanceThroughTheManagementPlaneWithBlobVersioning runs the suite through the ARM
// stand-in with the blob stand-in (test/stack.BlobStandIn) as the accounts' data plane, so that
// bucket deletion and the emptiness check meet versions too.
func TestConformanceThroughTheManagementPlaneWithBlobVersioning(t *testing.T) {
	blobs := stack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := stack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	small := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: 3}
	conformance.Run(t, conformance.Harness{
		Store:          armStore(t, arm, arm.ServicePrincipal(), false),
		SmallPages:     armStoreWith(t, small, arm.ServicePrincipal()),
		NewBucketName:  newBucketName,
		Region:         "westeurope",
		OtherRegion:    "northeurope",
		BadCredentials: armStore(t, arm, with(arm.ServicePrincipal(), "clientSecret", "wrong-secret"), false),
		ForeignBucket: func(t *testing.T) string {
			name := newBucketName()
			arm.PutAccount("someone-elses-group", azureprovider.AccountName(name), "westeurope", nil)
			return name
		},
		ManyObjects:    6000,
		SimulatedClock: true, // the stand-in's clock starts at 2025-01-01 and ticks by request
		Versioning: func(_ context.Context, _ string, on bool) error {
			blobs.SetVersioning(stack.StandInAccount, on)
			return nil
		},
	})
}

func armStoreWith(t testing.TB, p *azureprovider.Provider, data map[string][]byte) objectstore.Store {
	t.Helper()
	s, err := p.NewStore(context.Background(), provider.Credentials{Data: data, Region: "westeurope"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func TestAccountIsCreatedHardenedAndConverged(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	b := objectstore.Bucket{Name: name, Region: "westeurope"}
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	acct := arm.Account(azureprovider.AccountName(name))
	props := acct["properties"].(map[string]any)
	want := map[string]any{"supportsHttpsTrafficOnly": true, "minimumTlsVersion": "TLS1_2", "allowBlobPublicAccess": false}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("account property %s = %v; want %v", k, props[k], v)
		}
	}
	if acct["kind"] != "StorageV2" || acct["sku"].(map[string]any)["name"] != "Standard_ZRS" || acct["location"] != "westeurope" {
		t.Errorf("account kind %v, sku %v, location %v; want StorageV2, Standard_ZRS, westeurope", acct["kind"], acct["sku"], acct["location"])
	}
	if tags := acct["tags"].(map[string]any); tags[azureprovider.TagBucket] != name {
		t.Errorf("account tags %v; want %s=%s", tags, azureprovider.TagBucket, name)
	}
	if g := arm.Group(name); g == nil || g["tags"].(map[string]any)[azureprovider.TagBucket] != name {
		t.Errorf("resource group %v; want one tagged with the bucket", g)
	}
	rules := arm.Lifecycle(azureprovider.AccountName(name))["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)
	if len(rules) != 1 || rules[0].(map[string]any)["name"] != azureprovider.DeferredDeletionRule {
		t.Errorf("lifecycle rules %v; want the deferred-deletion rule", rules)
	}

	writes := arm.Writes()
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	if got := arm.Writes(); got != writes {
		t.Fatalf("a converged bucket got %d writes; want none: %v", got-writes, arm.Requests("PUT", "PATCH", "DELETE")[writes:])
	}

	arm.SetAccount(azureprovider.AccountName(name), func(a map[string]any) {
		p := a["properties"].(map[string]any)
		p["allowBlobPublicAccess"], p["minimumTlsVersion"], p["supportsHttpsTrafficOnly"] = true, "TLS1_0", false
	})
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	props = arm.Account(azureprovider.AccountName(name))["properties"].(map[string]any)
	for k, v := range want {
		if props[k] != v {
			t.Errorf("after drift: account property %s = %v; want %v", k, props[k], v)
		}
	}
	if err := s.DeleteBucket(ctx(t), name); err != nil {
		t.Fatal(err)
	}
	if arm.Account(azureprovider.AccountName(name)) != nil || arm.Group(name) != nil {
		t.Fatal("the account or resource group the extension created is left after DeleteBucket")
	}
}

func TestAccountNotTaggedForTheBucketIsNotTouched(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	// The same account name in the bucket's own group, but tagged for another bucket.
	arm.SetAccount(azureprovider.AccountName(name), func(a map[string]any) { a["tags"] = map[string]any{azureprovider.TagBucket: "other"} })
	before := len(arm.Requests("PUT", "PATCH", "DELETE"))
	err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	if !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("EnsureBucket: %v; want ErrOwnedByOther", err)
	}
	if err := s.DeleteBucket(ctx(t), name); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("DeleteBucket: %v; want ErrOwnedByOther", err)
	}
	if arm.Account(azureprovider.AccountName(name)) == nil {
		t.Fatal("DeleteBucket deleted an account not tagged for the bucket")
	}
	for _, r := range arm.Requests("PUT", "PATCH", "DELETE")[before:] {
		t.Errorf("changed something while the account is not the bucket's: %s %s", r.Method, r.Path)
	}
}

func days(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * 24 * time.Hour} }

func TestImmutabilityPolicyConverges(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	ensure := func(im *azureapi.ImmutableConfig) error {
		s := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{Immutability: im})
		return s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	}
	policy := func() (float64, string) {
		p := arm.ImmutabilityPolicy(account, name)
		if p == nil {
			return 0, ""
		}
		props := p["properties"].(map[string]any)
		return props["immutabilityPeriodSinceCreationInDays"].(float64), props["state"].(string)
	}
	steps := []struct {
		name      string
		declared  *azureapi.ImmutableConfig
		wantErr   bool
		wantDays  float64
		wantState string
	}{
		{"set", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(2)}, false, 2, "Unlocked"},
		{"unlocked follows the declaration", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(1)}, false, 1, "Unlocked"},
		{"removed while unlocked", nil, false, 0, ""},
		{"set and locked", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(3), Locked: true}, false, 3, "Locked"},
		{"locked is never shortened", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(2), Locked: true}, true, 3, "Locked"},
		{"locked is never unlocked", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(3)}, true, 3, "Locked"},
		{"locked is never removed", nil, true, 3, "Locked"},
		{"locked is extended", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(5), Locked: true}, false, 5, "Locked"},
	}
	for _, step := range steps {
		writes := arm.Writes()
		err := ensure(step.declared)
		if (err != nil) != step.wantErr || (err != nil && !errors.Is(err, objectstore.ErrInvalidConfig)) {
			t.Fatalf("%s: %v; want error %v (ErrInvalidConfig)", step.name, err, step.wantErr)
		}
		if step.wantErr && arm.Writes() != writes {
			t.Fatalf("%s: a refused declaration still wrote %d times", step.name, arm.Writes()-writes)
		}
		if d, st := policy(); d != step.wantDays || st != step.wantState {
			t.Fatalf("%s: policy %v days %q; want %v days %q", step.name, d, st, step.wantDays, step.wantState)
		}
	}
	// A locked policy with blobs keeps the account: deleting it is refused, not looped on.
	if err := s.DeleteBucket(ctx(t), name); !errors.Is(err, objectstore.ErrObjectLocked) {
		t.Fatalf("DeleteBucket with a locked policy: %v; want ErrObjectLocked", err)
	}
}

func TestManagementCredentials(t *testing.T) {
	arm := startARM(t)
	name := newBucketName()
	if err := armStore(t, arm, arm.WorkloadIdentity(), true).EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatalf("workload identity: %v", err)
	}
	wrong := with(arm.ServicePrincipal(), "clientSecret", "not-the-secret-xyz")
	err := armStore(t, arm, wrong, false).EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	if !errors.Is(err, objectstore.ErrUnauthenticated) || strings.Contains(err.Error(), "not-the-secret-xyz") {
		t.Fatalf("wrong client secret: %v; want ErrUnauthenticated without the secret", err)
	}
	cases := []struct {
		name string
		data map[string][]byte
		wi   bool
		want string
	}{
		{"service principal without subscription", with(arm.ServicePrincipal(), "subscriptionID", ""), false, `"subscriptionID"`},
		{"service principal without tenant", with(arm.ServicePrincipal(), "tenantID", ""), false, `"tenantID"`},
		{"workload identity without token", with(arm.WorkloadIdentity(), "token", ""), true, `"token"`},
		{"workload identity config without client", with(arm.WorkloadIdentity(), "config", "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\ntenantID: t\nsubscriptionID: s\n"), true, "config.clientID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
			_, err := p.NewStore(context.Background(), provider.Credentials{Data: c.data, WorkloadIdentity: c.wi, Region: "westeurope"}, nil)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig naming %s", err, c.want)
			}
			if strings.Contains(err.Error(), arm.ClientSecret) {
				t.Fatalf("the error leaks the client secret: %v", err)
			}
		})
	}
}

func TestCredentialIssuanceRegeneratesTheKeyNotInUse(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	issuer := armIssuer(t, arm, arm.ServicePrincipal())
	regenerated := func() []string {
		var keys []string
		for _, r := range arm.Requests("POST") {
			if strings.HasSuffix(r.Path, "/regeneratekey") {
				keys = append(keys, r.Body)
			}
		}
		return keys
	}
	first, err := issuer.IssueCredential(ctx(t), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "key1" || string(first.Data["storageKey"]) != arm.Key(account, "key1") || string(first.Data["storageAccount"]) != stack.StandInAccount || len(regenerated()) != 0 {
		t.Fatalf("first credential %s (account %s); want key1 of the account as created, nothing regenerated (%v)", first.ID, first.Data["storageAccount"], regenerated())
	}
	second, err := issuer.IssueCredential(ctx(t), name, []string{"key1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := regenerated(); second.ID != "key2" || len(got) != 1 || !strings.Contains(got[0], `"key2"`) || string(second.Data["storageKey"]) != arm.Key(account, "key2") {
		t.Fatalf("rotation issued %s, regenerated %v; want key2 regenerated and published", second.ID, got)
	}
	if _, err := issuer.IssueCredential(ctx(t), name, []string{"key1", "key2"}); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("issuing with both keys in use: %v; want ErrInvalidConfig", err)
	}
	if err := issuer.RevokeCredentials(ctx(t), name, []string{"key2"}); err != nil {
		t.Fatal(err)
	}
	if got := regenerated(); len(got) != 2 || !strings.Contains(got[1], `"key1"`) {
		t.Fatalf("revocation regenerated %v; want key1 (not kept) only", got)
	}
}

func TestSoftDeleteIsConvergedOnlyWhereAsked(t *testing.T) {
	arm := startARM(t)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	ensure := func(sd *azureapi.SoftDeleteConfig) {
		t.Helper()
		s := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{SoftDelete: sd})
		if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
	}
	policy := func(kind string) any {
		props, _ := arm.BlobService(account)["properties"].(map[string]any)
		p, _ := props[kind].(map[string]any)
		if p == nil || p["enabled"] != true {
			return 0.0
		}
		return p["days"]
	}
	ensure(nil)
	if arm.BlobService(account) != nil {
		t.Fatal("soft delete was set without being declared")
	}
	ensure(&azureapi.SoftDeleteConfig{BlobRetentionDays: 7})
	if policy("deleteRetentionPolicy") != 7.0 || policy("containerDeleteRetentionPolicy") != 0.0 {
		t.Fatalf("blob service %v; want blob soft delete 7 days, container soft delete off", arm.BlobService(account))
	}
	writes := arm.Writes()
	ensure(&azureapi.SoftDeleteConfig{BlobRetentionDays: 7})
	if arm.Writes() != writes {
		t.Fatal("converged soft delete was written again")
	}
	ensure(&azureapi.SoftDeleteConfig{})
	if policy("deleteRetentionPolicy") != 0.0 {
		t.Fatalf("blob service %v; want soft delete off", arm.BlobService(account))
	}
}
