// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// deferringStore answers DeferDeletion as told.
type deferringStore struct {
	*memstore.Store

	deferral objectstore.Deferral
	err      error
	asked    *int
}

func (s deferringStore) DeferDeletion(context.Context, string, string) (objectstore.Deferral, error) {
	*s.asked++
	return s.deferral, s.err
}

func TestDeletionWithLockedObjects(t *testing.T) {
	errNotKept := errors.New("the rule read back does not match what was written")
	first, last := time.Now().Add(24*time.Hour).UTC(), time.Now().Add(72*time.Hour).UTC()
	cases := []struct {
		name      string
		deferral  objectstore.Deferral
		err       error
		wantDone  bool
		wantCode  gardencorev1beta1.ErrorCode
		wantErr   string
		wantEvent []string
	}{
		{
			name:      "deferral verified: reported, then done",
			deferral:  objectstore.Deferral{Rule: "lifecycle rule gardener-backup-deferred-shoot--a--b--1"},
			wantDone:  true,
			wantEvent: []string{"LockedObjectsDeferred", "2 object versions", "shoot--a--b--1/", first.Format(time.RFC3339), last.Format(time.RFC3339), "lifecycle rule gardener-backup-deferred-shoot--a--b--1"},
		},
		{name: "store cannot defer: waits for the locks, says why", err: fmt.Errorf("no room for another lifecycle rule: %w", objectstore.ErrUnsupported), wantCode: gardencorev1beta1.ErrorInfraDependencies, wantErr: "no room for another lifecycle rule"},
		{name: "rule not in place: not done", err: errNotKept},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			keys := []string{"shoot--a--b--1/full", "shoot--a--b--1/incr", "shoot--a--b--1/free", "shoot--a--b--10/neighbour"}
			mem := controllertest.Bucket(t, "bucket", keys...)
			mem.Lock("bucket", keys[0], first)
			mem.Lock("bucket", keys[1], last)
			asked := 0
			store := deferringStore{Store: mem, deferral: c.deferral, err: c.err, asked: &asked}
			recorder := events.NewFakeRecorder(10)
			c8t := controllertest.Client()
			d := backupentry.NewDelegate(provider.Register(controllertest.Provider{Store: store}), c8t, recorder, options.DeletionOptions{})
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1"},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket", SecretRef: controllertest.SecretRef}}

			deferredBefore := testutil.ToFloat64(metrics.DeferredObjects.WithLabelValues(metrics.KindBackupEntry))
			err := d.Delete(ctx, logr.Discard(), be)
			deferred := testutil.ToFloat64(metrics.DeferredObjects.WithLabelValues(metrics.KindBackupEntry)) - deferredBefore
			if c.wantDone && deferred != 2 || !c.wantDone && deferred != 0 {
				t.Errorf("deferred_objects_total grew by %v (done=%v)", deferred, c.wantDone)
			}
			if c.wantDone {
				if metrics.DeletionRemaining.DeleteLabelValues(metrics.KindBackupEntry, be.Name) {
					t.Error("deletion_remaining_objects is still reported for a finished deletion")
				}
			} else if left := testutil.ToFloat64(metrics.DeletionRemaining.WithLabelValues(metrics.KindBackupEntry, be.Name)); left != 2 {
				t.Errorf("deletion_remaining_objects = %v; want the 2 locked versions", left)
			}
			metrics.DeletionRemaining.Reset()
			if asked != 1 {
				t.Fatalf("DeferDeletion asked %d times; want once", asked)
			}
			if left, _ := conformance.ListKeys(ctx, mem, "bucket", ""); strings.Join(left, ",") != strings.Join([]string{keys[0], keys[1], keys[3]}, ",") {
				t.Fatalf("left %v; want the two locked objects and the neighbour", left)
			}
			if c.wantDone != (err == nil) {
				t.Fatalf("Delete = %v; want done=%v (the finalizer goes only on a verified deferral)", err, c.wantDone)
			}
			if c.wantCode != "" {
				// As the library's reconciler writes status.lastError: from a requeue's cause.
				if codes := v1beta1helper.ExtractErrorCodes(reconcilerutils.ReconcileErrCauseOrErr(err)); len(codes) != 1 || codes[0] != c.wantCode {
					t.Fatalf("codes %v of %v; want %s", codes, err, c.wantCode)
				}
			}
			if c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Delete = %v; want it to say %q", err, c.wantErr)
			}
			if len(c.wantEvent) > 0 {
				event := <-recorder.Events
				for _, want := range c.wantEvent {
					if !strings.Contains(event, want) {
						t.Fatalf("event %q does not say %q", event, want)
					}
				}
			}
		})
	}
}

// twoCredentials serves the entry's store for the entry's secret and the bucket's for the
// BackupBucket's (secret data key "who").
type twoCredentials struct {
	controllertest.Provider

	bucket controllertest.Store
}

func (p twoCredentials) NewDataPlane(_ context.Context, c provider.Credentials) (objectstore.DataPlane, error) {
	return p.serve(c), nil
}

func (p twoCredentials) NewManagement(_ context.Context, c provider.Credentials, _ *controllertest.Config) (objectstore.Management, error) {
	return p.serve(c), nil
}

func (p twoCredentials) serve(c provider.Credentials) controllertest.Store {
	if string(c.Data["who"]) == "bucket" {
		return p.bucket
	}
	return p.Store
}

// TestDeferralFallsBackToTheBucketsCredentials: an entry's credentials that cannot hand locked
// objects to the store (an Azure account key cannot read the lifecycle rule back) leave it to
// the BackupBucket's, the operator's for the same bucket.
func TestDeferralFallsBackToTheBucketsCredentials(t *testing.T) {
	ctx := context.Background()
	mem := controllertest.Bucket(t, "bucket", "shoot--a--b--1/full")
	mem.Lock("bucket", "shoot--a--b--1/full", time.Now().Add(time.Hour))
	entryAsked, bucketAsked := 0, 0
	entryStore := deferringStore{Store: mem, err: fmt.Errorf("an account key cannot read the rule: %w", objectstore.ErrUnsupported), asked: &entryAsked}
	bucketStore := deferringStore{Store: mem, deferral: objectstore.Deferral{Rule: "lifecycle rule on the account"}, asked: &bucketAsked}

	c8t := controllertest.Client()
	bucketSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "bucket-bucket"}, Data: map[string][]byte{"who": []byte("bucket")}}
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"},
		Spec: extensionsv1alpha1.BackupBucketSpec{SecretRef: corev1.SecretReference{Namespace: "garden", Name: "bucket-bucket"}}}
	for _, obj := range []client.Object{bucketSecret, bb} {
		if err := c8t.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	recorder := events.NewFakeRecorder(10)
	d := backupentry.NewDelegate(provider.Register(twoCredentials{Provider: controllertest.Provider{Store: entryStore}, bucket: bucketStore}), c8t, recorder, options.DeletionOptions{})
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1"},
		Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket", SecretRef: controllertest.SecretRef}}
	if err := d.Delete(ctx, logr.Discard(), be); err != nil {
		t.Fatalf("Delete = %v; want the deferral through the bucket's credentials", err)
	}
	if entryAsked != 1 || bucketAsked != 1 {
		t.Fatalf("asked the entry's store %d and the bucket's %d times; want once each", entryAsked, bucketAsked)
	}
	if event := <-recorder.Events; !strings.Contains(event, "lifecycle rule on the account") {
		t.Fatalf("event %q does not name the bucket store's rule", event)
	}
}

func TestEntryWithoutBucketNameIsRefusedWithACode(t *testing.T) {
	c8t := controllertest.Client()
	d := backupentry.NewDelegate(provider.Register(controllertest.Provider{Store: memstore.New(10)}), c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1"}, Spec: extensionsv1alpha1.BackupEntrySpec{SecretRef: controllertest.SecretRef}}
	for name, err := range map[string]error{
		"etcd-backup": func() error {
			_, err := d.GetETCDSecretData(context.Background(), logr.Discard(), be, map[string][]byte{"bucketName": nil})
			return err
		}(),
		"deletion": d.Delete(context.Background(), logr.Discard(), be),
	} {
		codes := v1beta1helper.ExtractErrorCodes(err)
		if len(codes) != 1 || codes[0] != gardencorev1beta1.ErrorConfigurationProblem || !strings.HasPrefix(err.Error(), "spec.bucketName:") {
			t.Errorf("%s: %v (codes %v); want ERR_CONFIGURATION_PROBLEM beginning with spec.bucketName", name, err, codes)
		}
	}
}

func TestEntryOfAMissingBucketIsRefusedWithACode(t *testing.T) {
	c8t := controllertest.Client()
	mem := memstore.New(10)
	d := backupentry.NewDelegate(provider.Register(controllertest.Provider{Store: mem}), c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1"}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "nope", SecretRef: controllertest.SecretRef}}
	_, err := d.GetETCDSecretData(context.Background(), logr.Discard(), be, map[string][]byte{"bucketName": []byte("nope")})
	if codes := v1beta1helper.ExtractErrorCodes(err); len(codes) != 1 || codes[0] != gardencorev1beta1.ErrorConfigurationProblem || !strings.Contains(err.Error(), `spec.bucketName: bucket "nope" does not exist`) {
		t.Fatalf("%v (codes %v); want ERR_CONFIGURATION_PROBLEM naming spec.bucketName", err, codes)
	}
	if err := mem.EnsureBucket(context.Background(), objectstore.Bucket{Name: "nope"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.GetETCDSecretData(context.Background(), logr.Discard(), be, map[string][]byte{"bucketName": []byte("nope")}); err != nil {
		t.Fatalf("with the bucket there: %v", err)
	}
}
