// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package framework runs the real controllers of one provider in a manager against envtest and
// gives the integration suites of every provider the same helpers, so that they cannot drift apart.
package framework

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Ctx is a context that ends after 3 minutes (the library's reconcile timeout) or with the test.
func Ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

// EnsureNamespace creates the namespace unless it exists.
func (e *Env) EnsureNamespace(t *testing.T, name string) {
	t.Helper()
	err := e.K8s.Create(Ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// CreateSecret creates a secret with data (and its namespace) and returns its reference.
func (e *Env) CreateSecret(t *testing.T, namespace, name string, data map[string][]byte) corev1.SecretReference {
	t.Helper()
	e.EnsureNamespace(t, namespace)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
	if err := e.K8s.Create(Ctx(t), s); err != nil {
		t.Fatal(err)
	}
	return corev1.SecretReference{Namespace: namespace, Name: name}
}

var operationReconcile = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}

// CreateBucket creates a BackupBucket of the env's provider with the operator's secret data and
// the providerConfig, and returns it.
func (e *Env) CreateBucket(t *testing.T, name string, data map[string][]byte, providerConfig string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: e.Type},
			Region:      e.Region,
			SecretRef:   e.CreateSecret(t, "garden", "bucket-"+name, data),
		},
	}
	if providerConfig != "" {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(providerConfig)}
	}
	if err := e.K8s.Create(Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	return bb
}

// CreateEntry creates a BackupEntry of the env's provider in bucket with the secret data, and
// returns it.
func (e *Env) CreateEntry(t *testing.T, name, bucket string, data map[string][]byte) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: e.Type},
			Region:      e.Region,
			BucketName:  bucket,
			SecretRef:   e.CreateSecret(t, "garden", "entry-"+name, data),
		},
	}
	e.EnsureCluster(t, name, false)
	if err := e.K8s.Create(Ctx(t), be); err != nil {
		t.Fatal(err)
	}
	return be
}

// EnsureCluster writes the Cluster resource of the shoot of entry (named as the entry without its
// "--<uid>" suffix) as gardenlet does, its shoot hibernated or not.
func (e *Env) EnsureCluster(t *testing.T, entry string, hibernated bool) {
	t.Helper()
	i := strings.LastIndex(entry, "--")
	if i <= 0 {
		return
	}
	shoot := fmt.Sprintf(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","spec":{"hibernation":{"enabled":%t}},"status":{"isHibernated":%t}}`, hibernated, hibernated)
	cluster := &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: entry[:i]}}
	_, err := controllerutil.CreateOrUpdate(Ctx(t), e.K8s, cluster, func() error {
		cluster.Spec.CloudProfile = runtime.RawExtension{Raw: []byte(`{}`)}
		cluster.Spec.Seed = &runtime.RawExtension{Raw: []byte(`{}`)}
		cluster.Spec.Shoot = runtime.RawExtension{Raw: []byte(shoot)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Trigger sets the operation annotation, as gardenlet does to request a reconcile. It first
// waits past the current second, so that the status of the reconcile it causes carries a later
// lastUpdateTime (kept to the second) than any status before it: see SucceededAfter.
// annotations (key, value, ...) are set with it.
func (e *Env) Trigger(t *testing.T, obj client.Object, annotations ...string) {
	t.Helper()
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	// The patch is computed against the object as stored: a stale copy that still carries an
	// operation annotation the controller has since removed would patch without it.
	if err := e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	set := map[string]string{}
	maps.Copy(set, obj.GetAnnotations())
	set[v1beta1constants.GardenerOperation] = v1beta1constants.GardenerOperationReconcile
	for i := 0; i+1 < len(annotations); i += 2 {
		set[annotations[i]] = annotations[i+1]
	}
	obj.SetAnnotations(set)
	// An object that is already gone (a retry beat the trigger) is left to the caller's wait.
	if err := e.K8s.Patch(Ctx(t), obj, patch); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// WaitFor polls obj until cond holds, and fails with the object's last status otherwise.
func (e *Env) WaitFor(t *testing.T, obj extensionsv1alpha1.Object, timeout time.Duration, what string, cond func(extensionsv1alpha1.Object) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj)
		if err == nil && cond(obj) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s (get: %v); status: %s", what, timeout, err, Describe(obj))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Describe is an extension object's last operation and last error in one line, for failures.
func Describe(obj extensionsv1alpha1.Object) string {
	st := obj.GetExtensionStatus()
	var b strings.Builder
	if op := st.GetLastOperation(); op != nil {
		fmt.Fprintf(&b, "lastOperation %s/%s %q", op.Type, op.State, op.Description)
	}
	if le := st.GetLastError(); le != nil {
		fmt.Fprintf(&b, "; lastError %q codes %v", le.Description, le.Codes)
	}
	return b.String()
}

// Succeeded reports whether the object's last operation succeeded for its current generation,
// with no gardener operation annotation left.
func Succeeded(obj extensionsv1alpha1.Object) bool {
	op := obj.GetExtensionStatus().GetLastOperation()
	return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && obj.GetExtensionStatus().GetObservedGeneration() == obj.GetGeneration() &&
		obj.GetAnnotations()[v1beta1constants.GardenerOperation] == ""
}

// SucceededAfter is Succeeded, for a reconcile that wrote its status in since's second or later.
// Statuses keep whole seconds: take since after Trigger, which waits for the next second.
func SucceededAfter(since time.Time) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		op := obj.GetExtensionStatus().GetLastOperation()
		return Succeeded(obj) && !op.LastUpdateTime.Time.Before(since.Truncate(time.Second))
	}
}

// FailedWith returns a condition that holds when the object's last error carries code.
func FailedWith(code gardencorev1beta1.ErrorCode) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		le := obj.GetExtensionStatus().GetLastError()
		return le != nil && slices.Contains(le.Codes, code)
	}
}

// DeleteAndWaitGone deletes obj and waits until its finalizer is released.
func (e *Env) DeleteAndWaitGone(t *testing.T, obj extensionsv1alpha1.Object, timeout time.Duration) {
	t.Helper()
	if err := e.K8s.Delete(Ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not deleted within %s; status: %s", obj.GetName(), timeout, Describe(obj))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var nameSeq int

// UniqueName returns a fresh DNS-label name with the given prefix.
func UniqueName(prefix string) string {
	nameSeq++
	return fmt.Sprintf("%s%d%d", prefix, time.Now().UnixNano()%100000, nameSeq)
}

// Forget removes a BackupBucket that can never be deleted properly (its bucket is not ours or its
// credentials are wrong) by releasing its finalizers, as an operator would.
func (e *Env) Forget(t *testing.T, obj client.Object) {
	t.Helper()
	c := context.Background()
	if err := e.K8s.Delete(c, obj); client.IgnoreNotFound(err) != nil {
		t.Error(err)
		return
	}
	if err := e.K8s.Get(c, client.ObjectKeyFromObject(obj), obj); err != nil {
		return
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetFinalizers(nil)
	if err := e.K8s.Patch(c, obj, patch); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// SetEntrySecretKey sets one data key of the entry's credentials secret (garden/entry-<name>), as
// an operator rotating (or breaking) credentials would.
func (e *Env) SetEntrySecretKey(t *testing.T, be *extensionsv1alpha1.BackupEntry, key, value string) {
	t.Helper()
	sec := &corev1.Secret{}
	if err := e.K8s.Get(Ctx(t), client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data[key] = []byte(value)
	if err := e.K8s.Update(Ctx(t), sec); err != nil {
		t.Fatal(err)
	}
}

// DeleteFailingWith deletes obj and waits until its deletion fails with code.
func (e *Env) DeleteFailingWith(t *testing.T, obj extensionsv1alpha1.Object, code gardencorev1beta1.ErrorCode) {
	t.Helper()
	if err := e.K8s.Delete(Ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	e.WaitFor(t, obj, time.Minute, "deletion failing with "+string(code), FailedWith(code))
}

// SecretKeys returns the sorted data keys of a secret (the shoot's etcd-backup), and the secret.
func (e *Env) SecretKeys(t *testing.T, namespace, name string) ([]string, *corev1.Secret) {
	t.Helper()
	s := &corev1.Secret{}
	if err := e.K8s.Get(Ctx(t), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, s
}

// AssertNotRetriedSoon fails unless obj's last operation stays unchanged for a while: an error
// that waits for something (locks expiring) must not be retried in a loop.
func (e *Env) AssertNotRetriedSoon(t *testing.T, obj extensionsv1alpha1.Object) {
	t.Helper()
	seen := obj.GetExtensionStatus().GetLastOperation().LastUpdateTime
	time.Sleep(5 * time.Second)
	if err := e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if now := obj.GetExtensionStatus().GetLastOperation().LastUpdateTime; !now.Equal(&seen) {
		t.Fatalf("%s was retried at once (status updated again at %v)", obj.GetName(), now)
	}
}

// EventuallyHasEvent is HasEvent, waiting up to timeout (events are sent asynchronously).
func (e *Env) EventuallyHasEvent(t *testing.T, regarding, reason, note string, timeout time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		if e.HasEvent(t, regarding, reason, note) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// HasEvent reports whether an event about the object named regarding has the reason and a note
// containing note.
func (e *Env) HasEvent(t *testing.T, regarding, reason, note string) bool {
	t.Helper()
	events := &eventsv1.EventList{}
	if err := e.K8s.List(Ctx(t), events); err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(events.Items, func(ev eventsv1.Event) bool {
		return ev.Regarding.Name == regarding && ev.Reason == reason && strings.Contains(ev.Note, note)
	})
}

// DeleteAcrossReconciles deletes obj, waits until it is gone and fails unless at least one
// reconcile ended with a "deletion in progress" error first, that is unless the deletion really
// resumed across reconciles.
func (e *Env) DeleteAcrossReconciles(t *testing.T, obj extensionsv1alpha1.Object, timeout time.Duration) {
	t.Helper()
	if err := e.K8s.Delete(Ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	sawProgress := false
	var seen []string // distinct last errors, in order, for the failure message
	deadline := time.Now().Add(timeout)
	for e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj) == nil {
		if le := obj.GetExtensionStatus().GetLastError(); le != nil {
			if strings.Contains(le.Description, "deletion in progress") {
				sawProgress = true
			}
			if len(seen) == 0 || seen[len(seen)-1] != le.Description {
				seen = append(seen, le.Description)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not deleted in time: %s", obj.GetName(), Describe(obj))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawProgress {
		t.Errorf("the deletion did not report itself in progress across reconciles; last errors seen: %q", seen)
	}
}

// BucketFailure is a BackupBucket that must fail: with Code in status.lastError.codes and a
// description that mentions Mentions.
type BucketFailure struct {
	Name string
	// Bucket is the prefix of the bucket's name, which UniqueName completes (default "bad-").
	Bucket         string
	Data           map[string][]byte
	ProviderConfig string
	Code           gardencorev1beta1.ErrorCode
	Mentions       string
}

// BucketsFail runs every case as a subtest: it creates the bucket, waits for the error code,
// checks the description mentions what it must and none of secrets, and calls touchedNothing
// (which fails the test if the store was changed for the bucket of that name).
func (e *Env) BucketsFail(t *testing.T, cases []BucketFailure, secrets []string, touchedNothing func(t *testing.T, bucket string)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			bb := e.CreateBucket(t, UniqueName(cmp.Or(c.Bucket, "bad-")), c.Data, c.ProviderConfig)
			t.Cleanup(func() { e.Forget(t, bb) })
			e.WaitFor(t, bb, time.Minute, "error code "+string(c.Code), FailedWith(c.Code))
			desc := bb.Status.LastError.Description
			if !strings.Contains(desc, c.Mentions) {
				t.Errorf("lastError %q does not mention %q", desc, c.Mentions)
			}
			for _, s := range secrets {
				if strings.Contains(desc, s) {
					t.Fatalf("a secret value reached the status: %q", desc)
				}
			}
			touchedNothing(t, bb.Name)
		})
	}
}
