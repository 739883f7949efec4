// Package incumbent_test switches a seed's backups from gardener-extension-provider-aws v1.73.0
// (its real BackupBucket and BackupEntry controllers, built from test/incumbent/aws) to this
// extension's binary and back, on one envtest API server and MinIO, with the real
// etcd-backup-restore writing snapshots throughout. See docs/migrating.md and docs/testing.md.
package incumbent_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func init() { ctrllog.SetLogger(logr.Discard()) }

const region = "eu-central-1"

// The seed's providerConfig as an operator of provider-aws has it (its apiVersion), Object Lock
// for a day so that every snapshot is locked and every deletion is deferred.
const incumbentConfig = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`

// incumbentBinary is the incumbent's controllers (test/incumbent/aws, a module of its own):
// $INCUMBENT_AWS (make test builds it with hack/incumbent.sh), else built here.
func incumbentBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("INCUMBENT_AWS"); p != "" {
		return p
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "incumbent-aws")
	t.Log("building gardener-extension-provider-aws v1.73.0's controllers (test/incumbent/aws); the first build downloads its modules")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, "test", "incumbent", "aws")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the incumbent: %v\n%s", err, b)
	}
	return out
}

type seed struct {
	t      *testing.T
	env    *envtest.Environment
	fw     *framework.Env
	gaps   *stack.S3Gaps
	s3     *s3.Client // through the proxy: what both extensions see
	bucket string
	dir    string
}

// startIncumbent runs the incumbent's controllers with the S3 endpoint in the environment only
// (aws-sdk-go-v2's AWS_ENDPOINT_URL_S3); nothing of the test process's environment is passed.
func (s *seed) startIncumbent(bin string) *stack.Process {
	s.t.Helper()
	user, err := s.env.AddUser(envtest.User{Name: "provider-aws", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(s.dir, "incumbent-kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		s.t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "AWS_ENDPOINT_URL_S3=" + s.gaps.URL,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + filepath.Join(s.dir, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(s.dir, "none")}
	return stack.StartProcess(s.t, "incumbent-aws.log", env, bin, "--kubeconfig", path)
}

// versions lists every version of the bucket with its tags, the bucket's rule IDs, and for every
// version the IDs of the enabled expiring tag-scoped rules that take it in.
func (s *seed) versions() (map[string]map[string]string, map[string][]string, []string) {
	s.t.Helper()
	ctx := context.Background()
	var rules []types.LifecycleRule
	if lc, err := s.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &s.bucket}); err == nil {
		rules = lc.Rules
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, aws.ToString(r.ID))
	}
	slices.Sort(ids)
	tags, covered := map[string]map[string]string{}, map[string][]string{}
	pages := s3.NewListObjectVersionsPaginator(s.s3, &s3.ListObjectVersionsInput{Bucket: &s.bucket})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, v := range out.Versions {
			id := aws.ToString(v.Key) + "@" + aws.ToString(v.VersionId)
			tg, err := s.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &s.bucket, Key: v.Key, VersionId: v.VersionId})
			if err != nil {
				s.t.Fatal(err)
			}
			tags[id] = map[string]string{}
			for _, tag := range tg.TagSet {
				tags[id][aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
			for _, r := range rules {
				f := r.Filter
				expires := r.Expiration != nil && aws.ToInt32(r.Expiration.Days) > 0
				if r.Status == types.ExpirationStatusEnabled && expires && f != nil && f.Tag != nil && tags[id][aws.ToString(f.Tag.Key)] == aws.ToString(f.Tag.Value) {
					covered[id] = append(covered[id], aws.ToString(r.ID))
				}
			}
		}
	}
	return tags, covered, ids
}

// snapshotter runs etcd-backup-restore for entry with its etcd-backup secret as etcd-druid mounts
// it, and waits for a full snapshot.
type sidecar struct {
	proc  *stack.Process
	db    *stack.Etcd
	mount string
}

func (s *seed) snapshot(entry string) *sidecar {
	s.t.Helper()
	shoot := entry[:strings.LastIndex(entry, "--")]
	_, secret := s.fw.SecretKeys(s.t, shoot, "etcd-backup")
	sc := &sidecar{mount: s.t.TempDir()}
	stack.MountSecret(s.t, sc.mount, secret.Data)
	sc.db = stack.StartEtcd(s.t, filepath.Join(s.t.TempDir(), "etcd"))
	sc.db.Put(s.t, "/registry/"+entry, "1")
	sc.proc = stack.Consumer{StorageProvider: "S3", CredentialsEnv: "AWS_APPLICATION_CREDENTIALS"}.Snapshotter(s.t, sc.db, sc.mount, s.bucket, entry)
	s.waitSnapshots(sc, entry, "Full-", 1)
	return sc
}

func (s *seed) count(entry, kind string) int {
	out, err := s.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(entry + "/")})
	if err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, o := range out.Contents {
		if strings.Contains(aws.ToString(o.Key), kind) {
			n++
		}
	}
	return n
}

func (s *seed) waitSnapshots(sc *sidecar, entry, kind string, atLeast int) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for s.count(entry, kind) < atLeast {
		if sc.proc.Exited() || time.Now().After(deadline) {
			s.t.Fatalf("no %s snapshot %d of %s:\n%s", kind, atLeast, entry, sc.proc.Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (sc *sidecar) stop() { sc.proc.Stop(); sc.db.Stop() }

func TestTakeOverFromProviderAWSAndHandBack(t *testing.T) {
	ctx := context.Background()
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	incumbent := incumbentBinary(t)
	dir := t.TempDir()
	ours, err := stack.BuildBinary(dir, "aws")
	if err != nil {
		t.Fatal(err)
	}
	step("binaries built")
	minio, err := stack.StartMinIO(ctx, stack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minio.Stop)
	gaps, err := stack.StartS3Gaps(minio)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gaps.Close)
	testEnv, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEnv.Stop() })
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s := &seed{t: t, env: testEnv, fw: framework.Attach(k8s, &awsprovider.Provider{}, region), gaps: gaps, dir: dir,
		s3: s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(gaps.URL), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(minio.AccessKey, minio.SecretKey, ""), RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired})}
	// The operator's secret: both extensions and the sidecar reach MinIO through the proxy
	// (the incumbent through AWS_ENDPOINT_URL_S3; it copies the keys into etcd-backup).
	data := minio.SecretData()
	data["endpoint"] = []byte(gaps.URL)

	// 1. provider-aws owns the seed's backups.
	inc := s.startIncumbent(incumbent)
	bb := s.fw.CreateBucket(t, framework.UniqueName("seed-"), data, incumbentConfig)
	s.bucket = bb.Name
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's bucket reconciled", framework.Succeeded)
	if calls := strings.Join(gaps.Calls(), ","); !strings.Contains(calls, "PUT "+bb.Name+"?publicAccessBlock") || !strings.Contains(calls, "lifecycle (AbortIncompleteMultipartUpload)") {
		t.Fatalf("the incumbent's bucket creation did not pass the proxy as its code does it: %s\n%s", calls, inc.Tail())
	}
	newEntry := func(name string) *extensionsv1alpha1.BackupEntry {
		t.Helper()
		s.fw.EnsureNamespace(t, name[:strings.LastIndex(name, "--")])
		be := s.fw.CreateEntry(t, name, s.bucket, data)
		s.fw.WaitFor(t, be, 2*time.Minute, "entry "+name+" reconciled", framework.Succeeded)
		return be
	}
	beA, beB, beC := newEntry("shoot--p--a--1"), newEntry("shoot--p--b--1"), newEntry("shoot--p--c--1")
	scA := s.snapshot(beA.Name)
	scA.stop()
	scC := s.snapshot(beC.Name)
	scC.stop()
	scB := s.snapshot(beB.Name) // runs through the whole switch
	defer scB.stop()
	_, etcdBackupB := s.fw.SecretKeys(t, "shoot--p--b", "etcd-backup")
	step("the incumbent's bucket and three entries, with snapshots")
	s.fw.DeleteAndWaitGone(t, beA, 2*time.Minute) // every version locked: the incumbent defers
	before, _, rules := s.versions()
	if !slices.Contains(rules, awsprovider.IncumbentDeferralRule) {
		t.Fatalf("the incumbent's deletion left rules %v; want its %s", rules, awsprovider.IncumbentDeferralRule)
	}
	step("entry a deleted by the incumbent (deferred under Object Lock)")

	// 2. The switch: the incumbent's backup controllers off, ours on; the seed's providerConfig as it is.
	inc.Stop()
	ext, err := stack.StartExtension(ctx, testEnv, ours, dir)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "our reconcile of the incumbent's bucket", framework.SucceededAfter(since))
	tags, covered, rules := s.versions()
	if !slices.Contains(rules, awsprovider.AdoptedRule) {
		t.Fatalf("rules after the takeover %v; want %s", rules, awsprovider.AdoptedRule)
	}
	for id := range before {
		if _, ok := tags[id]; !ok {
			t.Errorf("version %s is gone after the takeover", id)
		}
		if strings.HasPrefix(id, beA.Name+"/") && !slices.Contains(covered[id], awsprovider.AdoptedRule) {
			t.Errorf("%s, deferred by the incumbent, is in scope of %v; want %s", id, covered[id], awsprovider.AdoptedRule)
		}
	}
	since = time.Now()
	s.fw.Trigger(t, beB)
	s.fw.WaitFor(t, beB, 2*time.Minute, "our reconcile of the incumbent's entry", framework.SucceededAfter(since))
	_, etcdBackupB2 := s.fw.SecretKeys(t, "shoot--p--b", "etcd-backup")
	if !maps.EqualFunc(etcdBackupB.Data, etcdBackupB2.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("etcd-backup of b changed across the takeover: keys %v -> %v", slices.Sorted(maps.Keys(etcdBackupB.Data)), slices.Sorted(maps.Keys(etcdBackupB2.Data)))
	}
	deltas := s.count(beB.Name, "Incr-")
	scB.db.Put(t, "/registry/after-takeover", "2")
	s.waitSnapshots(scB, beB.Name, "Incr-", deltas+1)
	step("taken over: adopted, converged, every version kept, etcd-backup unchanged, the sidecar writes on")
	s.fw.DeleteAndWaitGone(t, beC, 2*time.Minute) // ours defers under Object Lock
	tags, covered, _ = s.versions()
	for id, tg := range tags {
		if strings.HasPrefix(id, beC.Name+"/") && (tg[awsprovider.IncumbentDeferralTag] != "true" || !slices.Contains(covered[id], awsprovider.DeferredDeletionRule)) {
			t.Errorf("%s deferred by us carries %v, in scope of %v", id, tg, covered[id])
		}
	}
	step("entry c deleted by this extension (deferred, marked for both rules)")

	// 3. Hand back: handBack, then (with the incumbent's controllers on again) without it.
	setConfig := func(config string) {
		t.Helper()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(bb.DeepCopy())
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		if err := k8s.Patch(ctx, bb, patch); err != nil {
			t.Fatal(err)
		}
	}
	var withHandBack map[string]any
	_ = json.Unmarshal([]byte(incumbentConfig), &withHandBack)
	withHandBack["handBack"] = true
	raw, _ := json.Marshal(withHandBack)
	setConfig(string(raw))
	s.fw.Trigger(t, bb)
	since = time.Now()
	s.fw.WaitFor(t, bb, 2*time.Minute, "the hand-back reconcile", framework.SucceededAfter(since))
	_, _, rules = s.versions()
	if want := []string{"", awsprovider.IncumbentDeleteMarkersRule, awsprovider.IncumbentDeferralRule}; !slices.Equal(rules, want) {
		t.Fatalf("rules after the hand-back %v; want the incumbent's %v (the abort rule without an ID)", rules, want)
	}
	ext.Stop()
	// The succeeded hand-back reconcile let go of the bucket's entries: this extension's own
	// finalizer, which the incumbent does not know (with it, the incumbent's deletion of an entry
	// this extension reconciled would succeed and the entry never go), is on none of them.
	var entries extensionsv1alpha1.BackupEntryList
	if err := k8s.List(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	for _, be := range entries.Items {
		if be.Spec.BucketName == bb.Name && slices.Contains(be.Finalizers, backupentry.FinalizerName) {
			t.Fatalf("BackupEntry %s still carries %s after the hand-back reconcile: %v", be.Name, backupentry.FinalizerName, be.Finalizers)
		}
	}
	setConfig(incumbentConfig)
	inc = s.startIncumbent(incumbent)
	defer inc.Stop()
	// Its controllers reconcile on the operation annotation (gardener's DefaultControllerPredicates).
	s.fw.Trigger(t, bb)
	since = time.Now()
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's reconcile after the hand-back", framework.SucceededAfter(since))
	step("handed back")
	beD := newEntry("shoot--p--d--1")
	scD := s.snapshot(beD.Name)
	scD.stop()
	scB.stop()
	s.fw.DeleteAndWaitGone(t, beD, 2*time.Minute)
	s.fw.DeleteAndWaitGone(t, beB, 2*time.Minute)
	tags, covered, rules = s.versions()
	for id := range before {
		if _, ok := tags[id]; !ok {
			t.Errorf("version %s is gone", id)
		}
	}
	for id := range tags {
		if !slices.Contains(covered[id], awsprovider.IncumbentDeferralRule) {
			t.Errorf("after the incumbent's deletions: %s (tags %v) is in scope of no rule of the incumbent (rules %v)", id, tags[id], rules)
		}
	}
	step("the incumbent deleted b and d; every deferred version is in scope of its rule")
}
