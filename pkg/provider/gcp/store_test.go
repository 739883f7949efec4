package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func rawClient(t *testing.T, data map[string][]byte) *storage.Client {
	t.Helper()
	c, _, err := testProvider.NewClient(context.Background(), provider.Credentials{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func immutable(period time.Duration, locked bool) *gcpapi.BackupBucketConfig {
	return &gcpapi.BackupBucketConfig{Immutability: &gcpapi.ImmutableConfig{RetentionType: gcpapi.RetentionTypeBucket, RetentionPeriod: metav1.Duration{Duration: period}, Locked: locked}}
}

// ensure is EnsureBucket of s's bucket with the providerConfig cfg (nil: the defaults).
func ensure(t *testing.T, s objectstore.Store, name string, cfg *gcpapi.BackupBucketConfig) error {
	t.Helper()
	return gcpprovider.WithConfig(s, cfg).EnsureBucket(ctxFor(t), objectstore.Bucket{Name: name, Region: region})
}

// patches counts the bucket updates the front has seen for a bucket.
func patches(name string) int {
	n := 0
	for _, r := range gcs.Requests("/storage/v1/b/" + name) {
		if r.Method == "PATCH" && r.Path == "/storage/v1/b/"+name {
			n++
		}
	}
	return n
}

func field(t *testing.T, bucket, name string) map[string]any {
	t.Helper()
	raw, _ := gcs.BucketField(bucket, name)
	if raw == nil {
		return nil
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func TestBucketSettingsAreCreatedAndConverged(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	cfg := immutable(24*time.Hour, false)
	cfg.SoftDelete = &gcpapi.SoftDeleteConfig{RetentionDuration: metav1.Duration{Duration: 7 * 24 * time.Hour}}
	cfg.Labels = map[string]string{"cost-center": "platform"}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		iam := field(t, name, "iamConfiguration")
		if ubla, _ := iam["uniformBucketLevelAccess"].(map[string]any); ubla["enabled"] != true || iam["publicAccessPrevention"] != "enforced" {
			t.Fatalf("%s: iamConfiguration = %v; want uniform bucket-level access and enforced public access prevention", when, iam)
		}
		rules, _ := field(t, name, "lifecycle")["rule"].([]any)
		if len(rules) != 1 || !strings.Contains(fmt.Sprint(rules), "AbortIncompleteMultipartUpload") {
			t.Fatalf("%s: lifecycle rules = %v; want exactly the abort-upload rule (deferral rules come with deferrals)", when, rules)
		}
		if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "86400" {
			t.Fatalf("%s: retentionPolicy = %v; want 86400 s", when, rp)
		}
		if sd := field(t, name, "softDeletePolicy"); fmt.Sprint(sd["retentionDurationSeconds"]) != "604800" {
			t.Fatalf("%s: softDeletePolicy = %v; want 604800 s", when, sd)
		}
		if l := field(t, name, "labels"); l["cost-center"] != "platform" || l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue {
			t.Fatalf("%s: labels = %v", when, l)
		}
	}
	check("after creation")

	before := patches(name)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if after := patches(name); after != before {
		t.Fatalf("a converged bucket was updated again (%d updates); reconciles must be idempotent", after-before)
	}

	// Drift: somebody opens the bucket, replaces the lifecycle, drops a label and the retention.
	gcs.SetBucketField(name, "iamConfiguration", json.RawMessage(`{"uniformBucketLevelAccess":{"enabled":false},"publicAccessPrevention":"inherited"}`), false)
	gcs.SetBucketField(name, "lifecycle", json.RawMessage(`{"rule":[{"action":{"type":"Delete"},"condition":{"age":1}}]}`), false)
	gcs.SetBucketField(name, "labels", json.RawMessage(`{"other":"kept"}`), false)
	gcs.SetBucketField(name, "retentionPolicy", nil, false)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	check("after drift correction")
	if l := field(t, name, "labels"); l["other"] != "kept" {
		t.Fatalf("labels the extension does not declare are left alone, got %v", l)
	}
}

func TestSoftDeleteIsOffByDefault(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if sd := field(t, name, "softDeletePolicy"); fmt.Sprint(sd["retentionDurationSeconds"]) != "0" {
		t.Fatalf("softDeletePolicy = %v; want 0 (GCS's default of 7 days switched off)", sd)
	}
	if rp := field(t, name, "retentionPolicy"); rp != nil {
		t.Fatalf("retentionPolicy = %v; want none", rp)
	}
}

func TestRetentionPolicyLockIsNeverWeakened(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, immutable(48*time.Hour, true)); err != nil {
		t.Fatal(err)
	}
	if _, locked := gcs.BucketField(name, "retentionPolicy"); !locked {
		t.Fatal("the retention policy is not locked")
	}
	locks := gcs.Requests("/storage/v1/b/" + name + "/lockRetentionPolicy")
	if len(locks) != 1 || locks[0].Query.Get("ifMetagenerationMatch") == "" {
		t.Fatalf("lock requests = %+v; want one, guarded by the metageneration", locks)
	}
	refused := []struct {
		name string
		cfg  *gcpapi.BackupBucketConfig
	}{
		{"shorter period", immutable(24*time.Hour, true)},
		{"unlocked", immutable(48*time.Hour, false)},
		{"no immutability", nil},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			before := patches(name)
			err := ensure(t, s, name, c.cfg)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "locked retention policy") {
				t.Fatalf("got %v; want a configuration error about the locked policy", err)
			}
			if patches(name) != before {
				t.Fatal("the bucket was updated although the declaration was refused")
			}
			if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "172800" {
				t.Fatalf("retentionPolicy = %v; want 172800 s, untouched", rp)
			}
		})
	}
	if err := ensure(t, s, name, immutable(72*time.Hour, true)); err != nil {
		t.Fatalf("extending a locked policy: %v", err)
	}
	if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "259200" {
		t.Fatalf("retentionPolicy = %v; want 259200 s after extension", rp)
	}
	if n := len(gcs.Requests("/storage/v1/b/" + name + "/lockRetentionPolicy")); n != 1 {
		t.Fatalf("%d lock requests; a locked policy is not locked again", n)
	}
}

func TestUnlockedRetentionFollowsTheDeclaration(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, immutable(48*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "86400" {
		t.Fatalf("retentionPolicy = %v; want 86400 s", rp)
	}
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if rp := field(t, name, "retentionPolicy"); rp != nil {
		t.Fatalf("retentionPolicy = %v; want it removed", rp)
	}
}

func TestObjectsUnderRetentionAreReportedAndDeferred(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s := newStore(t, data)
	name := newBucketName()
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	mine := []string{"shoot--a--b--1/etcd-main/v2/Full-1", "shoot--a--b--1/etcd-main/v2/Incr-2", "shoot--a--b--1/etcd-main/v2/Incr-3"}
	neighbour := "shoot--a--b--10/etcd-main/v2/Full-1"
	if err := conformance.PutMany(ctx, s, name, append(slices.Clone(mine), neighbour)); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, s, name, prefix, objectstore.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Locked != len(mine) || res.Deleted != 0 {
		t.Fatalf("result %+v; want done with %d locked", res, len(mine))
	}
	if until := time.Until(res.EarliestRetainUntil); until < 23*time.Hour || until > 25*time.Hour {
		t.Fatalf("earliest retain-until %v is not about a day ahead", res.EarliestRetainUntil)
	}
	if _, err := s.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	c := rawClient(t, data)
	for _, k := range append(slices.Clone(mine), neighbour) {
		a, err := c.Bucket(name).Object(k).Attrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if marked := !a.CustomTime.IsZero(); marked != (k != neighbour) {
			t.Fatalf("%s: custom time %v; only the objects under the prefix are marked", k, a.CustomTime)
		}
	}
	objectPatches := func() int {
		n := 0
		for _, r := range gcs.Requests("/storage/v1/b/" + name + "/o/") {
			if r.Method == "PATCH" {
				n++
			}
		}
		return n
	}
	before := objectPatches()
	if _, err := s.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	if objectPatches() != before {
		t.Fatal("a second deferral re-marked objects that were marked already")
	}
	rules, _ := field(t, name, "lifecycle")["rule"].([]any)
	if !strings.Contains(fmt.Sprint(rules), "daysSinceCustomTime:1 matchesPrefix:[shoot--a--b--1/]") {
		t.Fatalf("lifecycle rules %v lack the entry's deferred-deletion rule", rules)
	}
}

func TestDeletesNameTheListedGeneration(t *testing.T) {
	ctx := ctxFor(t)
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	const key = "shoot--a--b--1/etcd-main/v2/Full-1"
	if err := s.PutObject(ctx, name, key, []byte("old")); err != nil {
		t.Fatal(err)
	}
	var listed []objectstore.ObjectVersion
	if err := s.ListObjects(ctx, name, "shoot--a--b--1/", func(p []objectstore.ObjectVersion) error { listed = append(listed, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Version == "" {
		t.Fatalf("listed %+v; want one object with its generation", listed)
	}
	// The sidecar writes a new generation between the listing and the delete.
	if err := s.PutObject(ctx, name, key, []byte("new")); err != nil {
		t.Fatal(err)
	}
	failed, err := s.DeleteObjects(ctx, name, listed)
	if err != nil || len(failed) != 0 {
		t.Fatalf("DeleteObjects = %v, %v", failed, err)
	}
	got, err := s.GetObject(ctx, name, key)
	if err != nil || string(got) != "new" {
		t.Fatalf("GetObject = %q, %v; the delete of the listed generation must leave the newer one", got, err)
	}
}

func TestThrottledDeletesComplete(t *testing.T) {
	throttling, err := stack.StartGCS(stack.GCSOptions{ThrottleEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer throttling.Stop()
	ctx := ctxFor(t)
	s := newStore(t, throttling.SecretData())
	name := newBucketName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: region}); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Incr-%04d", i)
	}
	if err := conformance.PutMany(ctx, s, name, append(keys, "shoot--a--b--10/x")); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, s, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done {
		t.Fatalf("DeletePrefix = %+v, %v", res, err)
	}
	left, err := conformance.ListKeys(ctx, s, name, "")
	if err != nil || !slices.Equal(left, []string{"shoot--a--b--10/x"}) {
		t.Fatalf("left %v, %v; want only the neighbour", left, err)
	}
	if throttling.Throttled.Load() == 0 {
		t.Fatal("the stand-in throttled nothing; the test proves nothing")
	}
}

func TestWorkloadIdentity(t *testing.T) {
	config := gcs.WorkloadIdentityConfig("wi-token-1")
	newWI := func(token string) (objectstore.Store, error) {
		data := map[string][]byte{"config": config, "storageAPIEndpoint": []byte(gcs.Endpoint)}
		if token != "" {
			data["token"] = []byte(token)
		}
		return testProvider.NewStore(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: true, Region: region}, nil)
	}
	s, err := newWI("wi-token-1")
	if err != nil {
		t.Fatal(err)
	}
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatalf("EnsureBucket with workload identity: %v", err)
	}
	wrong, err := newWI("not-a-token-of-ours")
	if err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, wrong, name, nil); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("with a token the STS refuses: %v; want ErrUnauthenticated", err)
	}
	if _, err := newWI(""); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("without a token: %v; want ErrUnauthenticated", err)
	}
}

func TestCredentialErrorsNameTheKeyAndHideTheValue(t *testing.T) {
	good := gcs.SecretData()
	externalAccount := `{"type":"external_account","audience":"a","subject_token_type":"t","token_url":"https://sts.example","credential_source":{"file":"/etc/passwd"}}`
	cases := []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no key file", with(good, "serviceaccount.json", ""), `"serviceaccount.json"`},
		{"not JSON", with(good, "serviceaccount.json", "secret-garbage"), `"serviceaccount.json" is not a service-account key file`},
		{"external account instead of a key", with(good, "serviceaccount.json", externalAccount), `found type "external_account"`},
		{"no project", with(good, "serviceaccount.json", `{"type":"service_account","client_email":"a@b","private_key":"secret-garbage"}`), "no project_id"},
		{"plain http to a remote endpoint", with(good, "storageAPIEndpoint", "http://storage.example.com/storage/v1/"), "plain http"},
		{"endpoint with a query", with(good, "storageAPIEndpoint", "https://storage.example.com/storage/v1/?key=secret-garbage"), "query"},
		{"endpoint with another path", with(good, "storageAPIEndpoint", "https://storage.example.com/upload/"), "path"},
		{"endpoint scheme", with(good, "storageAPIEndpoint", "ftp://storage.example.com/"), "scheme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := testProvider.NewStore(context.Background(), provider.Credentials{Data: c.data, Region: region}, nil)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig mentioning %s", err, c.want)
			}
			if strings.Contains(err.Error(), "secret-garbage") || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("the error leaks a secret value: %v", err)
			}
		})
	}
}

func TestEtcdBackupSecretData(t *testing.T) {
	p := &gcpprovider.Provider{}
	entry := func(name string) *extensionsv1alpha1.BackupEntry {
		return &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	key := gcs.ServiceAccountKey("etcd@geb-test-project.iam.gserviceaccount.com")
	static, err := p.EtcdBackupSecretData(entry("shoot--a--b--1"), map[string][]byte{
		"serviceaccount.json": key, "storageAPIEndpoint": []byte("https://storage.europe-west1.rep.googleapis.com/storage/v1/"),
		"bucketName": []byte("geb-bucket"), "stray.json": []byte("{}"), "other": []byte("x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if keys := sortedKeys(static); !slices.Equal(keys, []string{"bucketName", "serviceaccount.json", "storageAPIEndpoint"}) {
		t.Fatalf("static keys %v", keys)
	}
	for _, c := range []struct{ entry, dir string }{{"shoot--a--b--1", "/var/.gcp/token"}, {"source-shoot--a--b--1", "/var/.source-gcp/token"}} {
		wi, err := p.EtcdBackupSecretData(entry(c.entry), map[string][]byte{"config": sidecarWorkloadIdentityConfig(gcs.ProjectID, nil), "bucketName": []byte("geb-bucket")})
		if err != nil {
			t.Fatal(err)
		}
		if keys := sortedKeys(wi); !slices.Equal(keys, []string{"bucketName", "credentialsConfig", "projectID", "serviceaccount.json"}) {
			t.Fatalf("workload identity keys %v", keys)
		}
		var cc map[string]any
		if err := json.Unmarshal(wi["serviceaccount.json"], &cc); err != nil {
			t.Fatal(err)
		}
		if src, _ := cc["credential_source"].(map[string]any); src["file"] != c.dir || cc["type"] != "external_account" || cc["universe_domain"] != "googleapis.com" || string(wi["projectID"]) != gcs.ProjectID {
			t.Fatalf("%s: sidecar credentials %v, project %q", c.entry, cc, wi["projectID"])
		}
	}
	if _, err := p.EtcdBackupSecretData(entry("shoot--a--b--1"), map[string][]byte{"bucketName": []byte("geb-bucket")}); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("without credentials: %v; want ErrInvalidConfig", err)
	}
}

func sortedKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
