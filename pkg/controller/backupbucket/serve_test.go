// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// refusingPrimaryStore refuses a setting of the primary bucket "bucket" (a policy, lock or
// encryption setting the store rejects) while the bucket stays reachable; other buckets converge.
type refusingPrimaryStore struct{ *memstore.Store }

func (s refusingPrimaryStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if err := s.Store.EnsureBucket(ctx, b); err != nil {
		return err
	}
	if b.Name == "bucket" {
		return fmt.Errorf("setting the bucket's policy: %w", objectstore.ErrForbidden)
	}
	return nil
}

// TestServingTheCopyWithAReachablePrimaryThatDoesNotConverge: while copy.serve is copy and the
// copy bucket is ready, a primary that is reachable but refuses a setting does not fail the
// reconcile (gardenlet reconciles no BackupEntry of a failed BackupBucket, so no shoot would get
// the copy): BackupsServedFrom is True Copy naming the primary's error, with a
// PrimaryNotConverged warning.
func TestServingTheCopyWithAReachablePrimaryThatDoesNotConverge(t *testing.T) {
	ctx := context.Background()
	k8s := clientWithStatus(t)
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServeCopy}}}
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{
		SecretRef: controllertest.SecretRef, DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(cfg)}}}
	if err := k8s.Create(ctx, bb); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("copy")}}); err != nil {
		t.Fatal(err)
	}
	mem := controllertest.Bucket(t, "bucket")
	recorder := events.NewFakeRecorder(50)
	a := backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: refusingPrimaryStore{mem}}), k8s, k8s, recorder, options.DeletionOptions{})
	// The first pass makes the copy bucket ready; the second serves it.
	for pass := 1; pass <= 2; pass++ {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
			t.Fatalf("Reconcile (pass %d): %v; want none while the copy is served", pass, err)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionBackupsServedFrom)
	if c == nil || c.Status != gardencorev1beta1.ConditionTrue || c.Reason != connect.ServeReasonCopy || !strings.Contains(c.Message, "forbidden") {
		t.Fatalf("condition %+v; want True Copy naming the primary's error", c)
	}
	if evs := drain(recorder); !strings.Contains(evs, backupbucket.ReasonPrimaryNotConverged) {
		t.Fatalf("events %q; want a %s warning", evs, backupbucket.ReasonPrimaryNotConverged)
	}
}
