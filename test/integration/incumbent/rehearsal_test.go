// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// settingsReader is a world that reads its bucket's settings, each under the name its provider's
// PlanBucket gives the setting (objectstore.BucketChange.Setting), as a comparable value.
type settingsReader interface {
	settings(t *testing.T, bucket string) map[string]string
}

// TestRehearsalPredictsTheTakeover: with the incumbent's real code owning a seed's bucket and an
// entry, this extension's binary with --rehearse, beside it, writes nothing of theirs (no
// BackupBucket, BackupEntry or secret changes; the bucket's settings and objects as they were)
// and reports the bucket and the entry adoptable with their changes, in its ConfigMap and as the
// condition Rehearsal on the seed's Extension. Then the switch: this extension's first
// reconciles change exactly the settings, etcd-backup keys and finalizers the rehearsal named.
func TestRehearsalPredictsTheTakeover(t *testing.T) {
	for _, inc := range incumbents {
		if inc.provider != "aws" && inc.provider != "gcp" {
			continue // the others' stand-ins read no settings here (settingsReader)
		}
		t.Run(inc.provider, func(t *testing.T) {
			dir := t.TempDir()
			rehearseAndSwitch(t, inc.provider, inc.start(t, dir), dir)
		})
	}
}

func rehearseAndSwitch(t *testing.T, provider string, w world, dir string) {
	ctx := context.Background()
	sr, ok := w.(settingsReader)
	if !ok {
		t.Fatalf("the %s world reads no bucket settings", provider)
	}
	incumbent := incumbentBinary(t, provider)
	ours, err := stack.BuildBinary(dir, provider)
	if err != nil {
		t.Fatal(err)
	}
	s := newSeed(t, w, dir)
	testEnv, k8s := s.env, s.k8s

	// The incumbent owns the seed's bucket and one entry.
	inc := s.startIncumbent(incumbent, provider)
	defer func() { inc.Stop() }()
	bb := s.fw.CreateBucket(t, framework.UniqueName("seed-"), s.data, w.incumbentConfig())
	s.bucket = bb.Name
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's bucket reconciled", framework.Succeeded)
	w.incumbentMadeBucket(t, bb.Name, inc.Tail())
	s.fw.EnsureNamespace(t, "shoot--p--a")
	be := s.fw.CreateEntry(t, "shoot--p--a--1", s.bucket, s.entryData(bb))
	s.fw.WaitFor(t, be, 2*time.Minute, "the incumbent's entry reconciled", framework.Succeeded)
	sc := s.snapshot(be.Name)
	sc.stop()
	_, etcdBackup := s.fw.SecretKeys(t, "shoot--p--a", "etcd-backup")

	// The seed declares this extension's Extension (gardenlet writes it from spec.extensions):
	// the rehearsal's summary goes there.
	ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-" + provider},
		Spec: extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "backup-" + provider, Class: seedClass()}}}
	if err := k8s.Create(ctx, ex); err != nil {
		t.Fatal(err)
	}

	theirsBefore := theirObjects(t, k8s)
	settingsBefore, objectsBefore := sr.settings(t, bb.Name), s.objects("")
	rehearsing, err := stack.StartExtension(ctx, testEnv, ours, dir, append(w.extensionFlags(), "--rehearse", "--rehearsal-interval=2s")...)
	if err != nil {
		t.Fatal(err)
	}
	published := waitForRehearsal(t, k8s, provider)
	rehearsing.Stop()
	if diff := changedObjects(theirsBefore, theirObjects(t, k8s)); len(diff) > 0 {
		t.Fatalf("the rehearsal changed objects that are not its own: %v", diff)
	}
	if after := sr.settings(t, bb.Name); !maps.Equal(settingsBefore, after) {
		t.Fatalf("the rehearsal changed the bucket's settings: %v; were %v", after, settingsBefore)
	}
	if after := s.objects(""); !slices.Equal(objectsBefore, after) {
		t.Fatalf("the rehearsal changed the bucket's objects: %v; were %v", after, objectsBefore)
	}
	bucketReport, entryReport := reportOf(t, published, rehearsal.KindBackupBucket, bb.Name), reportOf(t, published, rehearsal.KindBackupEntry, be.Name)
	if bucketReport.Verdict != rehearsal.Adoptable || entryReport.Verdict != rehearsal.Adoptable {
		t.Fatalf("the rehearsal reports the bucket %s (%s) and the entry %s (%s); want both adoptable", bucketReport.Verdict, bucketReport.Reason, entryReport.Verdict, entryReport.Reason)
	}
	if len(bucketReport.Changes) == 0 {
		t.Fatal("the rehearsal predicts no change of the incumbent's bucket; the takeover converges it")
	}
	t.Logf("predicted for the bucket: %v", bucketReport.Changes)
	t.Logf("predicted for the entry: %v", entryReport.Changes)

	// The switch.
	inc.Stop()
	ext, err := stack.StartExtension(ctx, testEnv, ours, dir, w.extensionFlags()...)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Stop()
	since := time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "our reconcile of the incumbent's bucket", framework.SucceededAfter(since))
	observed := settingChanges(settingsBefore, sr.settings(t, bb.Name))
	if predicted := settingNames(bucketReport.Changes); !slices.Equal(predicted, observed) {
		t.Errorf("the takeover changed the settings %v; the rehearsal predicted %v", observed, predicted)
	}
	since = time.Now()
	s.fw.Trigger(t, be)
	s.fw.WaitFor(t, be, 2*time.Minute, "our reconcile of the incumbent's entry", framework.SucceededAfter(since))
	_, etcdBackupAfter := s.fw.SecretKeys(t, "shoot--p--a", "etcd-backup")
	observed = secretKeyChanges(etcdBackup.Data, etcdBackupAfter.Data)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(be.Finalizers, entryinfo.FinalizerName) && !slices.Contains(theirsBefore["BackupEntry/"+be.Name].finalizers, entryinfo.FinalizerName) {
		observed = append(observed, "finalizer "+entryinfo.FinalizerName)
	}
	slices.Sort(observed)
	if predicted := settingNames(entryReport.Changes); !slices.Equal(predicted, observed) {
		t.Errorf("the entry's takeover changed %v; the rehearsal predicted %v", observed, predicted)
	}
}

func seedClass() *extensionsv1alpha1.ExtensionClass {
	c := extensionsv1alpha1.ExtensionClassSeed
	return &c
}

// waitForRehearsal waits for a rehearsal that planned with the seed's configuration applied (a
// first pass may find it awaited) and has put its summary on the seed's Extension; it returns
// the published report.
func waitForRehearsal(t *testing.T, k8s client.Client, provider string) rehearsal.Published {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "garden", Name: "gardener-extension-backup-" + provider + "-rehearsal"}
	var last string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cm := &corev1.ConfigMap{}
		ex := &extensionsv1alpha1.Extension{}
		if k8s.Get(ctx, key, cm) == nil && k8s.Get(ctx, client.ObjectKey{Namespace: "garden", Name: "backup-" + provider}, ex) == nil {
			var p rehearsal.Published
			cond := v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal)
			if err := json.Unmarshal([]byte(cm.Data[rehearsal.ConfigMapKey]), &p); err == nil && cond != nil {
				last = fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
				if cond.Reason == rehearsal.ReasonAllAdoptable && strings.HasPrefix(cond.Message, p.Summary) {
					return p
				}
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("no rehearsal found every object adoptable; the last condition: %s", last)
	return rehearsal.Published{}
}

func reportOf(t *testing.T, p rehearsal.Published, kind, name string) rehearsal.Report {
	t.Helper()
	i := slices.IndexFunc(p.Reports, func(r rehearsal.Report) bool { return r.Kind == kind && r.Name == name })
	if i < 0 {
		t.Fatalf("the rehearsal reports no %s %s: %+v", kind, name, p.Reports)
	}
	return p.Reports[i]
}

// object is what the rehearsal must leave as it is of an object not its own.
type object struct {
	resourceVersion string
	finalizers      []string
}

// theirObjects are the seed's BackupBuckets, BackupEntries and secrets, by kind/namespace/name.
func theirObjects(t *testing.T, k8s client.Client) map[string]object {
	t.Helper()
	out := map[string]object{}
	add := func(kind string, o client.Object) {
		out[kind+"/"+strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/")] = object{o.GetResourceVersion(), o.GetFinalizers()}
	}
	ctx := context.Background()
	buckets, entries, secrets := &extensionsv1alpha1.BackupBucketList{}, &extensionsv1alpha1.BackupEntryList{}, &corev1.SecretList{}
	for _, l := range []client.ObjectList{buckets, entries, secrets} {
		if err := k8s.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for i := range buckets.Items {
		add("BackupBucket", &buckets.Items[i])
	}
	for i := range entries.Items {
		add("BackupEntry", &entries.Items[i])
	}
	for i := range secrets.Items {
		add("Secret", &secrets.Items[i])
	}
	return out
}

func changedObjects(before, after map[string]object) []string {
	var diff []string
	for k, b := range before {
		if a, ok := after[k]; !ok || a.resourceVersion != b.resourceVersion {
			diff = append(diff, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, k+" (new)")
		}
	}
	slices.Sort(diff)
	return diff
}

// settingNames are the names of the settings changes change, sorted; a lifecycle rule counts as
// "lifecycle rule" (GCS names a rule by its content only), once per rule.
func settingNames(changes []objectstore.BucketChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, normalised(c.Setting))
	}
	slices.Sort(out)
	return out
}

func normalised(setting string) string {
	if strings.HasPrefix(setting, "lifecycle rule ") {
		return "lifecycle rule"
	}
	return setting
}

// settingChanges are the settings whose value differs between before and after (added, changed
// or gone), named as settingNames names them, sorted.
func settingChanges(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			out = append(out, normalised(k))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, normalised(k))
		}
	}
	slices.Sort(out)
	return out
}

// secretKeyChanges are the etcd-backup secret's keys that differ between before and after, as
// the rehearsal names them (never their values).
func secretKeyChanges(before, after map[string][]byte) []string {
	var out []string
	for k, v := range after {
		if old, ok := before[k]; !ok || string(old) != string(v) {
			out = append(out, "etcd-backup secret key "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, "etcd-backup secret key "+k)
		}
	}
	slices.Sort(out)
	return out
}

// settings reads the bucket's policy statements (by Sid), lifecycle rules (by ID), versioning,
// default encryption, public access block and Object Lock default retention, under the names
// the aws provider's PlanBucket gives them.
func (w *awsWorld) settings(t *testing.T, bucket string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	put := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	if p, err := w.s3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &bucket}); err == nil {
		var doc struct{ Statement []map[string]any }
		if err := json.Unmarshal([]byte(aws.ToString(p.Policy)), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Statement {
			sid, _ := st["Sid"].(string)
			put("bucket policy statement "+sid, st)
		}
	}
	if lc, err := w.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket}); err == nil {
		for _, r := range lc.Rules {
			put("lifecycle rule "+aws.ToString(r.ID), r)
		}
	}
	if v, err := w.s3.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &bucket}); err == nil && v.Status != "" {
		out["versioning"] = string(v.Status)
	}
	if e, err := w.s3.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &bucket}); err == nil && e.ServerSideEncryptionConfiguration != nil {
		put("default encryption", e.ServerSideEncryptionConfiguration.Rules)
	}
	if p, err := w.s3.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: &bucket}); err == nil {
		put("public access block", p.PublicAccessBlockConfiguration)
	}
	if l, err := w.s3.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &bucket}); err == nil && l.ObjectLockConfiguration != nil && l.ObjectLockConfiguration.Rule != nil {
		put("Object Lock default retention", l.ObjectLockConfiguration.Rule)
	}
	return out
}

// settings reads the bucket's labels, lifecycle rules (by content), uniform bucket-level access,
// public access prevention, soft delete and retention policy, as the front keeps them, under the
// names the gcp provider's PlanBucket gives them.
func (w *gcpWorld) settings(t *testing.T, bucket string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range w.labels(bucket) {
		out["label "+k] = v
	}
	var lc struct{ Rule []json.RawMessage }
	if raw, _ := w.gcs.BucketField(bucket, "lifecycle"); raw != nil {
		if err := json.Unmarshal(raw, &lc); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range lc.Rule {
		out["lifecycle rule "+string(r)] = "present"
	}
	var iam struct {
		UniformBucketLevelAccess struct{ Enabled bool } `json:"uniformBucketLevelAccess"`
		PublicAccessPrevention   string                 `json:"publicAccessPrevention"`
	}
	if raw, _ := w.gcs.BucketField(bucket, "iamConfiguration"); raw != nil {
		if err := json.Unmarshal(raw, &iam); err != nil {
			t.Fatal(err)
		}
	}
	out["uniform bucket-level access"] = fmt.Sprint(iam.UniformBucketLevelAccess.Enabled)
	if iam.PublicAccessPrevention != "" {
		out["public access prevention"] = iam.PublicAccessPrevention
	}
	if raw, _ := w.gcs.BucketField(bucket, "softDeletePolicy"); raw != nil {
		out["soft delete retention"] = string(raw)
	}
	raw, locked := w.gcs.BucketField(bucket, "retentionPolicy")
	if raw != nil {
		out["retention policy"] = string(raw)
	}
	if locked {
		out["retention policy lock"] = "locked"
	}
	return out
}
