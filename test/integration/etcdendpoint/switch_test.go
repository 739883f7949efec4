// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdendpoint_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// minioConfig is the providerConfig of an operator of MinIO (which implements neither the public
// access block nor multipart-abort lifecycle rules); handBackConfig the same with handBack.
const (
	minioConfig    = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`
	handBackConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"handBack":true}`
)

// etcdCounter counts the spec changes of the Etcds gardenlet writes: a change of
// metadata.generation or of the spec from what gardenlet wrote.
type etcdCounter struct {
	generation map[string]int64
	changes    []string
}

// shootReconcile is gardenlet's Etcd write of every name (a shoot reconcile each), counted.
func (c *etcdCounter) shootReconcile(t *testing.T, phase string, names ...string) {
	t.Helper()
	for _, name := range names {
		e, err := deploy(context.Background(), name)
		if err != nil {
			t.Fatalf("%s: gardenlet's write of Etcd %s: %v (spec changes counted so far: %q)", phase, name, err, c.changes)
		}
		want, err := deploy(context.Background(), name) // written again: the spec gardenlet wants
		if err != nil {
			t.Fatalf("%s: gardenlet's write of Etcd %s: %v", phase, name, err)
		}
		if gen, ok := c.generation[name]; ok && e.Generation != gen {
			c.changes = append(c.changes, fmt.Sprintf("%s: Etcd %s generation %d -> %d", phase, name, gen, e.Generation))
		}
		if !reflect.DeepEqual(e.Spec, want.Spec) || want.Spec.Backup.Store.EndpointOverride != nil {
			override := "<none>"
			if p := e.Spec.Backup.Store.EndpointOverride; p != nil {
				override = *p
			}
			c.changes = append(c.changes, fmt.Sprintf("%s: Etcd %s spec is not gardenlet's (spec.backup.store.endpointOverride %s)", phase, name, override))
		}
		c.generation[name] = want.Generation
	}
}

// TestSwitchAndHandBackChangeNoEtcdSpec: gardenlet writes the Etcds of a shoot before the switch,
// after this extension's binary (as the chart runs it: no flag of it serves or registers a
// webhook, charts' TestNoEtcdWebhook) reconciled the bucket and the entry, whose etcd-backup
// secret names the store's endpoint (MinIO's, an S3-compatible store's), during the hand-back,
// and after it, with the binary killed during its writes. Not one Etcd's spec or generation
// changes, so no etcd pod rolls: counted, and zero.
func TestSwitchAndHandBackChangeNoEtcdSpec(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	binary, err := stack.BuildBinary(dir, "aws")
	if err != nil {
		t.Fatal(err)
	}
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer minio.Stop()
	fw := framework.Attach(k8s, &awsprovider.Provider{}, "eu-central-1")
	operator := minio.SecretData()
	if !slices.Contains(slices.Collect(maps.Keys(operator)), "endpoint") {
		t.Fatal("the operator's secret names no endpoint: the test would prove nothing")
	}

	// Before the switch: the incumbent's bucket and entry; its etcd-backup secret holds every key of
	// the operator's secret and bucketName (provider-aws passes them all on); gardenlet's Etcds.
	bb := fw.CreateBucket(t, bucket, operator, minioConfig)
	be := fw.CreateEntry(t, namespace+"--uid", bucket, operator)
	incumbentSecret := maps.Clone(operator)
	incumbentSecret["bucketName"] = []byte(bucket)
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: namespace}, Data: incumbentSecret}); err != nil {
		t.Fatal(err)
	}
	count := &etcdCounter{generation: map[string]int64{}}
	names := []string{"etcd-main", "etcd-events"}
	count.shootReconcile(t, "before the switch", names...)

	// The switch: this extension's binary reconciles the bucket and the entry.
	ext, err := stack.StartExtension(ctx, testEnv, binary, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ext.Stop()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Clean(ext.LogPath)); err == nil {
				t.Logf("extension log:\n%s", log)
			}
		}
	}()
	since := time.Now()
	fw.Trigger(t, bb)
	fw.WaitFor(t, bb, 2*time.Minute, "the bucket reconciled by this extension", framework.SucceededAfter(since))
	fw.Trigger(t, be)
	fw.WaitFor(t, be, 2*time.Minute, "the entry reconciled by this extension", framework.SucceededAfter(since))
	if _, secret := fw.SecretKeys(t, namespace, "etcd-backup"); string(secret.Data["endpoint"]) != minio.Endpoint {
		t.Fatalf("this extension's etcd-backup names endpoint %q; want the store's", secret.Data["endpoint"])
	}
	count.shootReconcile(t, "after the switch", names...)
	count.shootReconcile(t, "a new shoot after the switch", "etcd-new")

	// The hand-back: handBack set and reconciled, then the binary killed while gardenlet writes.
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(bb.DeepCopy())
	bb.Spec.ProviderConfig.Raw = []byte(handBackConfig)
	if err := k8s.Patch(ctx, bb, patch); err != nil {
		t.Fatal(err)
	}
	since = time.Now()
	fw.Trigger(t, bb)
	fw.WaitFor(t, bb, 2*time.Minute, "the hand-back reconcile", framework.SucceededAfter(since))
	count.shootReconcile(t, "handed back, this extension running", names...)
	ext.Kill()
	count.shootReconcile(t, "handed back, this extension killed", append(names, "etcd-new")...)

	// etcd-druid's finalizer removal of a deleted Etcd goes through.
	gone := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-new", Namespace: namespace}}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(gone), gone); err != nil {
		t.Fatal(err)
	}
	if err := holdWithFinalizer(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := release(ctx, gone); err != nil {
		t.Fatalf("etcd-druid's finalizer removal: %v", err)
	}
	waitFor(t, "the deleted Etcd to be gone", func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(gone), gone)) })

	if len(count.changes) > 0 {
		t.Fatalf("%d Etcd spec changes across the switch and the hand-back; want none:\n%s", len(count.changes), strings.Join(count.changes, "\n"))
	}
	t.Logf("Etcd writes counted in 5 phases: 0 spec changes (generations %v)", count.generation)
}
