// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// bucketConfig is the aws providerConfig of the test buckets (MinIO lacks the two settings);
// generatedConfig adds a MinIO-issued credential per bucket with a short rotation grace.
//
// The keys are sorted, as kubectl sends them (it converts YAML through a map): the seed's API
// server stores an extension resource's providerConfig re-encoded with sorted keys, and gardenlet
// compares the extension BackupBucket's spec with the one it wants byte for byte
// (reflect.DeepEqual, gardener pkg/gardenlet/controller/backupbucket/reconciler.go:203): a core
// providerConfig in any other key order differs forever, and gardenlet re-annotates the
// extension BackupBucket after every reconcile and never marks the core one Succeeded
// (TestUnsortedProviderConfig pins this; the entry controller compares the same way).
const (
	bucketConfig    = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"kind":"BackupBucketConfig"}`
	generatedConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"generatedCredentials":{"issuer":"MinIO","rotation":{"gracePeriod":"%s"}},"kind":"BackupBucketConfig"}`
	// unsortedConfig is bucketConfig as a Go client marshalling a typed config sends it.
	unsortedConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`
)

var seq atomic.Int64

// unique returns a fresh DNS-label name.
func unique(prefix string) string {
	return fmt.Sprintf("%s%d%d", prefix, time.Now().UnixNano()%100000, seq.Add(1))
}

// operatorData is the operator's credentials for MinIO, reached through the proxy.
func operatorData() map[string][]byte {
	data := minio.SecretData()
	delete(data, "region")
	data["endpoint"] = []byte(proxy.URL)
	return data
}

// eventually polls check every 250ms until it reports done; on timeout it fails with what and
// the last state check described.
func eventually(t *testing.T, timeout time.Duration, what string, check func() (bool, string)) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(timeout); ; time.Sleep(250 * time.Millisecond) {
		var done bool
		if done, state = check(); done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last seen: %s", what, timeout, state)
		}
	}
}

func ctx() context.Context { return context.Background() }

// describe is a core resource's status as gardenlet wrote it, for failure messages.
func describe(op *gardencorev1beta1.LastOperation, lastErr *gardencorev1beta1.LastError, generation, observed int64) string {
	s := fmt.Sprintf("generation %d observed %d", generation, observed)
	if op != nil {
		s += fmt.Sprintf("; lastOperation %s/%s %d%% %q", op.Type, op.State, op.Progress, op.Description)
	}
	if lastErr != nil {
		s += fmt.Sprintf("; lastError %v %q", lastErr.Codes, lastErr.Description)
	}
	return s
}

// coreBucket creates a core BackupBucket on seed-a (coreBucketOn).
func coreBucket(t *testing.T, providerConfig string) *gardencorev1beta1.BackupBucket {
	t.Helper()
	return coreBucketOn(t, seedA, providerConfig)
}

// coreBucketOn creates an aws core BackupBucket on seedName (coreBucketFor).
func coreBucketOn(t *testing.T, seedName, providerConfig string) *gardencorev1beta1.BackupBucket {
	t.Helper()
	return coreBucketFor(t, "aws", region, operatorData(), seedName, providerConfig)
}

// coreBucketFor creates a core BackupBucket of provider typ in region on seedName as gardener
// v1.150 does: the credentials (operator) are a Secret in the garden named by spec.credentialsRef.
func coreBucketFor(t *testing.T, typ, region string, operator map[string][]byte, seedName, providerConfig string) *gardencorev1beta1.BackupBucket {
	t.Helper()
	name := unique("gl-")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: gardenNamespace, Name: "backup-" + name}, Data: operator}
	if err := garden.Create(ctx(), secret); err != nil {
		t.Fatal(err)
	}
	bb := &gardencorev1beta1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gardencorev1beta1.BackupBucketSpec{
			Provider:       gardencorev1beta1.BackupBucketProvider{Type: typ, Region: region},
			ProviderConfig: &runtime.RawExtension{Raw: []byte(providerConfig)},
			CredentialsRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: gardenNamespace, Name: secret.Name},
			SeedName:       new(seedName),
		},
	}
	if err := garden.Create(ctx(), bb); err != nil {
		t.Fatalf("creating the core BackupBucket: %v", err)
	}
	return bb
}

// waitBucket polls the core BackupBucket until cond holds.
func waitBucket(t *testing.T, name string, timeout time.Duration, what string, cond func(*gardencorev1beta1.BackupBucket) bool) *gardencorev1beta1.BackupBucket {
	t.Helper()
	bb := &gardencorev1beta1.BackupBucket{}
	eventually(t, timeout, "core BackupBucket "+name+": "+what, func() (bool, string) {
		if err := garden.Get(ctx(), client.ObjectKey{Name: name}, bb); err != nil {
			return false, err.Error()
		}
		ext := &extensionsv1alpha1.BackupBucket{}
		state := describe(bb.Status.LastOperation, bb.Status.LastError, bb.Generation, bb.Status.ObservedGeneration) + extensionState(ext, name)
		if !rawEqual(bb.Spec.ProviderConfig, ext.Spec.ProviderConfig) {
			state += fmt.Sprintf("; providerConfig differs: core %s, extension %s", raw(bb.Spec.ProviderConfig), raw(ext.Spec.ProviderConfig))
		}
		return cond(bb), state
	})
	return bb
}

// waitEntry polls the core BackupEntry until cond holds.
func waitEntry(t *testing.T, key client.ObjectKey, timeout time.Duration, what string, cond func(*gardencorev1beta1.BackupEntry) bool) *gardencorev1beta1.BackupEntry {
	t.Helper()
	be := &gardencorev1beta1.BackupEntry{}
	eventually(t, timeout, "core BackupEntry "+key.Name+": "+what, func() (bool, string) {
		if err := garden.Get(ctx(), key, be); err != nil {
			return false, err.Error()
		}
		return cond(be), describe(be.Status.LastOperation, be.Status.LastError, be.Generation, be.Status.ObservedGeneration) +
			fmt.Sprintf("; spec.seedName %v status.seedName %v", ptr.Deref(be.Spec.SeedName, "<nil>"), ptr.Deref(be.Status.SeedName, "<nil>")) +
			extensionState(&extensionsv1alpha1.BackupEntry{}, key.Name)
	})
	return be
}

// extensionState is the extension resource of that name on each seed, for failure messages; obj
// is left with the first seed's that has one (by seed name: seed-a's before seed-b's).
func extensionState(obj extensionsv1alpha1.Object, name string) string {
	var state string
	found := false
	for _, seedName := range slices.Sorted(maps.Keys(seeds)) {
		w := seeds[seedName]
		cur := obj.DeepCopyObject().(extensionsv1alpha1.Object)
		if err := w.client.Get(ctx(), client.ObjectKey{Name: name}, cur); err != nil {
			if !apierrors.IsNotFound(err) {
				state += fmt.Sprintf("; %s extension resource: %v", seedName, err)
			}
			continue
		}
		if !found {
			found = true
			_ = w.client.Get(ctx(), client.ObjectKey{Name: name}, obj)
		}
		state += fmt.Sprintf("; %s extension resource: %s annotations %v", seedName, framework.Describe(cur), cur.GetAnnotations())
	}
	if state == "" {
		return "; no extension resource on any seed"
	}
	return state
}

func bucketSucceeded(bb *gardencorev1beta1.BackupBucket) bool {
	return coreSucceeded(bb, bb.Status.LastOperation, bb.Status.LastError, bb.Status.ObservedGeneration, "")
}

func entrySucceeded(typ gardencorev1beta1.LastOperationType) func(*gardencorev1beta1.BackupEntry) bool {
	return func(be *gardencorev1beta1.BackupEntry) bool {
		return coreSucceeded(be, be.Status.LastOperation, be.Status.LastError, be.Status.ObservedGeneration, typ)
	}
}

// waitGone polls until obj is gone from c.
func waitGone(t *testing.T, c client.Client, obj client.Object, timeout time.Duration, what string) {
	t.Helper()
	eventually(t, timeout, what, func() (bool, string) {
		err := c.Get(ctx(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("still there (deletionTimestamp %v, finalizers %v)", obj.GetDeletionTimestamp(), obj.GetFinalizers())
	})
}

// shoot is one shoot's world as the test lays it out: a project namespace in the garden
// (garden-<project>), the shoot's namespace and its Cluster in the seed (shoot--<project>--<name>)
// and a ShootState (read by gardenlet's restore). The entry is "<technical id>--<uid>".
type shoot struct {
	project, name, uid string
}

func (s shoot) namespace() string   { return "garden-" + s.project }
func (s shoot) technicalID() string { return fmt.Sprintf("shoot--%s--%s", s.project, s.name) }
func (s shoot) entryName() string   { return s.technicalID() + "--" + s.uid }
func (s shoot) entryKey() client.ObjectKey {
	return client.ObjectKey{Namespace: s.namespace(), Name: s.entryName()}
}

// newShoot lays out a shoot's world. The Cluster's Shoot carries metadata.namespace: gardenlet's
// entry controller maps an extension BackupEntry to the core one through it
// (gardener pkg/gardenlet/controller/backupentry/add.go:130-153).
func newShoot(t *testing.T) shoot {
	t.Helper()
	return newShootOn(t, seed)
}

// newShootOn is newShoot with the shoot's seed side on c.
func newShootOn(t *testing.T, c client.Client) shoot {
	t.Helper()
	s := shoot{project: unique("p"), name: "s", uid: unique("u")}
	if err := garden.Create(ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.namespace()}}); err != nil {
		t.Fatal(err)
	}
	if err := garden.Create(ctx(), &gardencorev1beta1.ShootState{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace(), Name: s.name}}); err != nil {
		t.Fatal(err)
	}
	s.placeOn(t, c)
	return s
}

// placeOn lays out the shoot's seed side on a seed's API server c, as gardenlet does when the
// shoot is scheduled or migrated there: its namespace and its Cluster (kept where they are).
func (s shoot) placeOn(t *testing.T, c client.Client) {
	t.Helper()
	if err := c.Create(ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.technicalID()}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	shootJSON := fmt.Sprintf(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":%q,"namespace":%q,"uid":%q},"spec":{"hibernation":{"enabled":false}},"status":{"isHibernated":false,"technicalID":%q}}`,
		s.name, s.namespace(), s.uid, s.technicalID())
	cluster := &extensionsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: s.technicalID()},
		Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"CloudProfile"}`)},
			Seed:         &runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed"}`)},
			Shoot:        runtime.RawExtension{Raw: []byte(shootJSON)},
		},
	}
	if err := c.Create(ctx(), cluster); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// ownerRef is the shoot's controller reference, as gardener puts it on the shoot's entries.
func (s shoot) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot", Name: s.name, UID: types.UID(s.uid),
		Controller: new(true), BlockOwnerDeletion: new(false)}
}

// coreEntry creates the shoot's core BackupEntry (name prefix "" or "source-") on bucket for seedName.
func coreEntry(t *testing.T, s shoot, namePrefix, bucket, seedName string, annotations map[string]string) *gardencorev1beta1.BackupEntry {
	t.Helper()
	be := &gardencorev1beta1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace(), Name: namePrefix + s.entryName(), Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
		Spec: gardencorev1beta1.BackupEntrySpec{BucketName: bucket, SeedName: new(seedName)},
	}
	if err := garden.Create(ctx(), be); err != nil {
		t.Fatalf("creating the core BackupEntry: %v", err)
	}
	return be
}

// secretData reads a secret's data (never logged).
func secretData(t *testing.T, c client.Client, namespace, name string) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(ctx(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatalf("secret %s/%s: %v", namespace, name, err)
	}
	return s.Data
}

// credentialID is the published credential's ID of a bucket's generated secret in the seed.
func credentialID(t *testing.T, bucket string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := seed.Get(ctx(), client.ObjectKey{Namespace: gardenNamespace, Name: "generated-bucket-" + bucket}, s); err != nil {
		t.Fatalf("the extension's generated secret of %s: %v", bucket, err)
	}
	return s.Annotations[backupbucket.AnnotationCredential]
}

// sameCredentials reports whether got carries want's credential keys with want's values (names
// the keys that differ, never the values).
func sameCredentials(got, want map[string][]byte) (bool, string) {
	var differ []string
	for _, k := range []string{"accessKeyID", "secretAccessKey", "endpoint"} {
		if !bytes.Equal(got[k], want[k]) {
			differ = append(differ, k)
		}
	}
	return len(differ) == 0, fmt.Sprintf("keys that differ: %v (keys present: %v)", differ, slices.Sorted(maps.Keys(got)))
}

// hasOperationAnnotation reports whether obj still asks for an operation.
func hasOperationAnnotation(obj metav1.Object) bool {
	_, ok := obj.GetAnnotations()[v1beta1constants.GardenerOperation]
	return ok
}

// raw is a RawExtension's bytes as text ("<nil>" for none).
func raw(r *runtime.RawExtension) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Raw)
}

// rawEqual compares two RawExtensions as JSON text.
func rawEqual(a, b *runtime.RawExtension) bool {
	return strings.TrimSpace(raw(a)) == strings.TrimSpace(raw(b))
}
