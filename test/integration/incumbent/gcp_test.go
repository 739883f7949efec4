// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	gcsiam "cloud.google.com/go/iam"
	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

const gcpRegion = "europe-west1"

// gcpConfig is the seed's providerConfig as an operator of provider-gcp has it: a bucket
// retention policy of a day, so that every snapshot is held and every deletion is deferred.
const gcpConfig = `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`

// gcpIncumbentLifecycle is the one rule each reconcile of provider-gcp v1.53.4 sets
// (pkg/controller/backupbucket/actuator.go:111-127 and 147-162, unless isUpdateRequired,
// :190-204, finds the bucket's lifecycle reflect.DeepEqual to it), as the JSON API carries it.
const gcpIncumbentLifecycle = `{"rule":[{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1}}]}`

// gcpWorld is fake-gcs-server behind the GCS front for gardener-extension-provider-gcp v1.53.4.
// Its storage endpoint is not an input of its code (pkg/gcp/client/storage.go:38-45 gives
// storage.NewClient only credentials; STORAGE_EMULATOR_HOST would switch authentication off,
// storage.go:196-201 of cloud.google.com/go/storage v1.62.3, which the front refuses), so the
// incumbent reaches https://storage.googleapis.com through stack.Redirect, which serves that host
// with the front; the service-account key's token_uri is the front's own token endpoint.
type gcpWorld struct {
	gcs      *gcpstack.GCS
	redirect *stack.Redirect
	data     map[string][]byte
	// patchesAtHandBack is how many bucket updates the front had seen at the hand-back.
	patchesAtHandBack int
}

func startGCP(t *testing.T, dir string) world {
	t.Helper()
	gcs, err := gcpstack.StartGCS(gcpstack.GCSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gcs.Stop)
	front, err := stack.ForwardTo(gcs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := stack.StartRedirect(dir, map[string]http.Handler{"storage.googleapis.com": front})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redirect.Close)
	return &gcpWorld{gcs: gcs, redirect: redirect, data: gcs.SecretData()}
}

func (w *gcpWorld) attach(k8s client.Client) *framework.Env {
	return framework.Attach(k8s, &gcpprovider.Provider{IAMEndpoint: w.gcs.URL + "/"}, gcpRegion)
}

// secretData: a service-account key of the front's project; storageAPIEndpoint is this
// extension's way to the front (the incumbent does not read it).
func (w *gcpWorld) secretData() map[string][]byte { return w.data }
func (w *gcpWorld) incumbentConfig() string       { return gcpConfig }
func (w *gcpWorld) handBackConfig() string        { return withHandBack(gcpConfig) }
func (w *gcpWorld) incumbentEnv() []string        { return w.redirect.Env() }
func (w *gcpWorld) extensionFlags() []string      { return nil }
func (w *gcpWorld) incumbentArgs() []string       { return nil }
func (w *gcpWorld) defers() bool                  { return true }

func (w *gcpWorld) consumer(t *testing.T) stack.Consumer { return gcpstack.GCSConsumer(t, w.gcs) }

func (w *gcpWorld) lifecycle(bucket string) string {
	raw, _ := w.gcs.BucketField(bucket, "lifecycle")
	return string(raw)
}

func (w *gcpWorld) labels(bucket string) map[string]string {
	raw, _ := w.gcs.BucketField(bucket, "labels")
	var labels map[string]string
	_ = json.Unmarshal(raw, &labels)
	return labels
}

func (w *gcpWorld) bucketPatches(bucket string) int {
	n := 0
	for _, r := range w.gcs.Requests("/b/" + bucket) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.Path, "/b/"+bucket) {
			n++
		}
	}
	return n
}

func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func (w *gcpWorld) incumbentMadeBucket(t *testing.T, bucket, log string) {
	t.Helper()
	if hosts := w.redirect.Hosts(); !slices.Contains(hosts, "storage.googleapis.com") || len(w.redirect.Refused()) > 0 {
		t.Fatalf("the incumbent reached %v through the redirect (refused %v); want storage.googleapis.com only\n%s", hosts, w.redirect.Refused(), log)
	}
	if lc := w.lifecycle(bucket); !sameJSON(lc, gcpIncumbentLifecycle) || len(w.labels(bucket)) > 0 {
		t.Fatalf("the incumbent's bucket has lifecycle %s and labels %v; want %s and none", lc, w.labels(bucket), gcpIncumbentLifecycle)
	}
}

// marked fails unless every live object under entry/ (at least one) carries a custom time, the
// mark provider-gcp's and this extension's rule delete by (pkg/gcp/client/storage.go:131-136).
func (w *gcpWorld) marked(t *testing.T, bucket, prefix string) {
	t.Helper()
	c, _, err := (&gcpprovider.Provider{}).NewClient(context.Background(), provider.Credentials{Data: w.data})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	it := c.Bucket(bucket).Objects(context.Background(), &storage.Query{Prefix: prefix})
	for {
		o, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if o.CustomTime.IsZero() {
			t.Errorf("%s is held by the retention policy but carries no custom time: no rule will delete it", o.Name)
		}
	}
	if n == 0 {
		t.Errorf("no object under %q: the retention policy held none", prefix)
	}
}

func (w *gcpWorld) incumbentDeferred(t *testing.T, bucket, entry string) {
	t.Helper()
	w.marked(t, bucket, entry+"/")
}

func (w *gcpWorld) adopted(t *testing.T, bucket, _ string) {
	t.Helper()
	labels := w.labels(bucket)
	if labels[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue || labels[gcpprovider.AdoptedLabel] != gcpprovider.AdoptedFromProviderGCP {
		t.Fatalf("labels after the takeover %v; want %s=%s and %s=%s", labels, gcpapi.ManagedLabel, gcpapi.ManagedLabelValue, gcpprovider.AdoptedLabel, gcpprovider.AdoptedFromProviderGCP)
	}
	// The incumbent's marks stay in scope: its rule is kept.
	if lc := w.lifecycle(bucket); !strings.Contains(lc, `"daysSinceCustomTime":1`) {
		t.Fatalf("lifecycle after the takeover %s; want provider-gcp's rule kept", lc)
	}
}

func (w *gcpWorld) weDeferred(t *testing.T, bucket, entry string) {
	t.Helper()
	w.marked(t, bucket, entry+"/")
}

func (w *gcpWorld) handedBack(t *testing.T, bucket string) {
	t.Helper()
	if lc := w.lifecycle(bucket); !sameJSON(lc, gcpIncumbentLifecycle) {
		t.Fatalf("lifecycle after the hand-back %s; want exactly provider-gcp's %s", lc, gcpIncumbentLifecycle)
	}
	// This extension's labels leave with it (the operator's stay: foreigner).
	for _, k := range []string{gcpapi.ManagedLabel, gcpapi.AbortRuleLabel, gcpprovider.AdoptedLabel} {
		if v, ok := w.labels(bucket)[k]; ok {
			t.Errorf("after the hand-back the bucket keeps this extension's label %s=%s", k, v)
		}
	}
	w.patchesAtHandBack = w.bucketPatches(bucket)
}

// ended: provider-gcp's reconciles after the hand-back found nothing to change on the bucket,
// every object left is marked, and the kept lifecycle run past the retention deletes them all.
func (w *gcpWorld) ended(t *testing.T, bucket string) {
	t.Helper()
	if n := w.bucketPatches(bucket); n != w.patchesAtHandBack {
		t.Errorf("provider-gcp updated the bucket %d times after the hand-back; want none (its isUpdateRequired found the hand-back's form different)", n-w.patchesAtHandBack)
	}
	w.marked(t, bucket, "")
	if _, err := w.gcs.RunLifecycle(bucket, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	c, _, err := (&gcpprovider.Provider{}).NewClient(context.Background(), provider.Credentials{Data: w.data})
	if err != nil {
		t.Fatal(err)
	}
	it := c.Bucket(bucket).Objects(context.Background(), &storage.Query{Versions: true})
	if o, err := it.Next(); !errors.Is(err, iterator.Done) {
		t.Errorf("the lifecycle past the retention left %v (%v)", o, err)
	}
}

// An operator's label and IAM binding on provider-gcp's bucket. An operator's lifecycle rule is
// not among them here: provider-gcp v1.53.4's own reconcile replaces the whole lifecycle with its
// one rule (isUpdateRequired, pkg/controller/backupbucket/actuator.go:190-204), so a rule cannot
// outlive the incumbent's reconcile whatever this extension does; that this extension keeps one
// through the takeover and the hand-back is pkg/provider/gcp's
// TestForeignSettingsSurviveTakeoverAndHandBack.
const (
	gcpOperatorLabel  = "cost-center"
	gcpOperatorMember = "group:audit@example.com"
	gcpOperatorRole   = "roles/storage.objectViewer"
)

func (w *gcpWorld) client(t *testing.T) *storage.Client {
	t.Helper()
	c, _, err := (&gcpprovider.Provider{}).NewClient(context.Background(), provider.Credentials{Data: w.data})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *gcpWorld) addForeign(t *testing.T, bucket string) {
	t.Helper()
	ctx, c := context.Background(), w.client(t)
	upd := storage.BucketAttrsToUpdate{}
	upd.SetLabel(gcpOperatorLabel, "backup-audit")
	if _, err := c.Bucket(bucket).Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	h := c.Bucket(bucket).IAM()
	policy, err := h.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	policy.Add(gcpOperatorMember, gcsiam.RoleName(gcpOperatorRole))
	if err := h.SetPolicy(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if got := w.foreign(t, bucket); len(got) != 2 {
		t.Fatalf("the bucket's foreign settings %v; want the operator's label and binding", got)
	}
}

// foreign is the operator's label and IAM binding where they are found.
func (w *gcpWorld) foreign(t *testing.T, bucket string) []string {
	t.Helper()
	var out []string
	if v, ok := w.labels(bucket)[gcpOperatorLabel]; ok {
		out = append(out, "label "+gcpOperatorLabel+"="+v)
	}
	p, err := w.client(t).Bucket(bucket).IAM().Policy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.HasRole(gcpOperatorMember, gcsiam.RoleName(gcpOperatorRole)) {
		out = append(out, "binding "+gcpOperatorRole+" "+gcpOperatorMember)
	}
	return out
}
