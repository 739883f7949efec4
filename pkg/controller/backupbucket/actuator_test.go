// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// refusingStore refuses to delete its bucket as not empty, as Swift did for a container whose
// hidden versions the listing missed; write, if set, is what "someone else" writes first.
type refusingStore struct {
	*memstore.Store

	write string
}

func (s refusingStore) DeleteBucket(ctx context.Context, name string) error {
	if s.write != "" {
		if err := s.PutObject(ctx, name, s.write, []byte("late")); err != nil {
			return err
		}
	}
	return objectstore.ErrBucketNotEmpty
}

func TestDeleteOfABucketThatCannotBeEmptied(t *testing.T) {
	cases := []struct {
		name     string
		store    func(*memstore.Store) controllertest.Store
		wantErr  bool
		mentions string
	}{
		{"emptied and deleted", func(s *memstore.Store) controllertest.Store { return s }, false, ""},
		{"store holds what it does not list", func(s *memstore.Store) controllertest.Store { return refusingStore{Store: s} }, true, "holds what it does not list"},
		{"written into while deleted", func(s *memstore.Store) controllertest.Store {
			return refusingStore{Store: s, write: "shoot--x--y--1/late"}
		}, true, `"shoot--x--y--1/late"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := controllertest.Bucket(t, "bucket", "shoot--a--b--1/x")
			c8t := controllertest.Client()
			a := backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: c.store(mem)}), c8t, c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{SecretRef: controllertest.SecretRef}}
			err := a.Delete(ctx, logr.Discard(), bb)
			if !c.wantErr {
				if err != nil {
					t.Fatalf("Delete: %v", err)
				}
				if err := mem.ListObjects(ctx, "bucket", "", func([]objectstore.ObjectVersion) error { return nil }); !errors.Is(err, objectstore.ErrBucketNotFound) {
					t.Fatalf("the bucket is still there: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.mentions) {
				t.Fatalf("Delete = %v; want an error that says %s", err, c.mentions)
			}
			// Retried with the reconciler's exponential back-off, not requeued every second.
			if errors.As(err, new(*reconcilerutils.RequeueAfterError)) {
				t.Fatalf("Delete = %v; want no fixed requeue", err)
			}
			if codes := v1beta1helper.ExtractErrorCodes(err); len(codes) != 1 || codes[0] != gardencorev1beta1.ErrorInfraDependencies {
				t.Fatalf("codes %v; want ERR_INFRA_DEPENDENCIES", codes)
			}
		})
	}
}

// takenStore answers every bucket's creation as a store does for a name another account holds.
type takenStore struct{ *memstore.Store }

func (takenStore) EnsureBucket(context.Context, objectstore.Bucket) error {
	return fmt.Errorf("creating the bucket: %w", objectstore.ErrOwnedByOther)
}

// TestFailingReconcilesMarkTheBucketFailing: a bucket name taken in the store shows in
// status.lastError only; the actuator also marks the bucket failing, by name and with the code
// (BackupReconcileFailing), until a pass succeeds.
func TestFailingReconcilesMarkTheBucketFailing(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New(10)
	c8t := controllertest.Client()
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: extensionsv1alpha1.BackupBucketSpec{SecretRef: controllertest.SecretRef}}
	t.Cleanup(func() { metrics.ForgetOperation(metrics.KindBackupBucket, bb.Name) })
	failing := func() []string {
		ch := make(chan prometheus.Metric, 100)
		metrics.OperationFailingSince.Collect(ch)
		close(ch)
		var got []string
		for m := range ch {
			var pb dto.Metric
			_ = m.Write(&pb)
			labels := map[string]string{}
			for _, l := range pb.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["name"] == bb.Name {
				got = append(got, labels["kind"]+" "+labels["operation"]+" "+labels["code"])
			}
		}
		return got
	}

	taken := backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: takenStore{mem}}), c8t, c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
	if err := taken.Reconcile(ctx, logr.Discard(), bb); !errors.Is(reconcilerutils.ReconcileErrCauseOrErr(err), objectstore.ErrOwnedByOther) {
		t.Fatalf("Reconcile = %v; want the name taken", err)
	}
	if got := failing(); !slices.Equal(got, []string{"BackupBucket reconcile ERR_CONFIGURATION_PROBLEM"}) {
		t.Fatalf("failing series %v; want the bucket's reconcile with ERR_CONFIGURATION_PROBLEM", got)
	}

	free := backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: mem}), c8t, c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
	if err := free.Reconcile(ctx, logr.Discard(), bb); err != nil {
		t.Fatalf("Reconcile with the name free: %v", err)
	}
	if got := failing(); len(got) != 0 {
		t.Fatalf("failing series %v after a pass that succeeded; want none", got)
	}
}
