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
	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
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
	bb := createBucket(t, k8s, cfg)
	createCopySecret(t, k8s)
	mem := controllertest.Bucket(t, "bucket")
	recorder := events.NewFakeRecorder(50)
	a := newActuator(k8s, refusingPrimaryStore{mem}, recorder)
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
