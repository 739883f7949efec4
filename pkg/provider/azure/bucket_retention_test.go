// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

func days(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * 24 * time.Hour} }

func TestImmutabilityPolicyConverges(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	ensure := func(im *azureapi.ImmutableConfig) error {
		s := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{Immutability: im})
		return s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	}
	policy := func() (float64, string) {
		p := arm.ImmutabilityPolicy(account, name)
		if p == nil {
			return 0, ""
		}
		props := p["properties"].(map[string]any)
		return props["immutabilityPeriodSinceCreationInDays"].(float64), props["state"].(string)
	}
	steps := []struct {
		name      string
		declared  *azureapi.ImmutableConfig
		wantErr   bool
		wantDays  float64
		wantState string
	}{
		{"set", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(2)}, false, 2, "Unlocked"},
		{"unlocked, declared shorter: the longer is kept", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(1)}, false, 2, "Unlocked"},
		{"unlocked, not declared: kept", nil, false, 2, "Unlocked"},
		{"unlocked follows a longer declaration", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(3)}, false, 3, "Unlocked"},
		{"locked over the longer period", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(1), Locked: true}, false, 3, "Locked"},
		{"locked is never shortened", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(2), Locked: true}, true, 3, "Locked"},
		{"locked is never unlocked", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(3)}, true, 3, "Locked"},
		{"locked is never removed", nil, true, 3, "Locked"},
		{"locked is extended", &azureapi.ImmutableConfig{RetentionType: "bucket", RetentionPeriod: days(5), Locked: true}, false, 5, "Locked"},
	}
	// The steps whose plan names the policy as kept (and writes nothing for it).
	kept := map[string]bool{"unlocked, declared shorter: the longer is kept": true, "unlocked, not declared: kept": true}
	for _, step := range steps {
		if kept[step.name] {
			planner := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{Immutability: step.declared}).Management.(objectstore.BucketPlanner)
			changes, err := planner.PlanBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
			if err != nil || !slices.ContainsFunc(changes, func(c objectstore.BucketChange) bool {
				return c.Action == objectstore.ChangeKeep && c.Setting == "container immutability policy"
			}) {
				t.Fatalf("%s: plan %+v, %v; want the immutability policy named as kept", step.name, changes, err)
			}
		}
		writes := arm.Writes()
		err := ensure(step.declared)
		if (err != nil) != step.wantErr || (err != nil && !errors.Is(err, objectstore.ErrInvalidConfig)) {
			t.Fatalf("%s: %v; want error %v (ErrInvalidConfig)", step.name, err, step.wantErr)
		}
		if step.wantErr && arm.Writes() != writes {
			t.Fatalf("%s: a refused declaration still wrote %d times", step.name, arm.Writes()-writes)
		}
		if d, st := policy(); d != step.wantDays || st != step.wantState {
			t.Fatalf("%s: policy %v days %q; want %v days %q", step.name, d, st, step.wantDays, step.wantState)
		}
	}
	// A locked policy with blobs keeps the account: deleting it is refused, not looped on.
	if err := s.DeleteBucket(ctx(t), name); !errors.Is(err, objectstore.ErrObjectLocked) {
		t.Fatalf("DeleteBucket with a locked policy: %v; want ErrObjectLocked", err)
	}
}

func TestSoftDeleteIsConvergedOnlyWhereAsked(t *testing.T) {
	arm := startARM(t)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	ensure := func(sd *azureapi.SoftDeleteConfig) {
		t.Helper()
		s := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{SoftDelete: sd})
		if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
	}
	policy := func(kind string) any {
		props, _ := arm.BlobService(account)["properties"].(map[string]any)
		p, _ := props[kind].(map[string]any)
		if p == nil || p["enabled"] != true {
			return 0.0
		}
		return p["days"]
	}
	ensure(nil)
	if arm.BlobService(account) != nil {
		t.Fatal("soft delete was set without being declared")
	}
	ensure(&azureapi.SoftDeleteConfig{BlobRetentionDays: 7})
	if policy("deleteRetentionPolicy") != 7.0 || policy("containerDeleteRetentionPolicy") != 0.0 {
		t.Fatalf("blob service %v; want blob soft delete 7 days, container soft delete off", arm.BlobService(account))
	}
	writes := arm.Writes()
	ensure(&azureapi.SoftDeleteConfig{BlobRetentionDays: 7})
	if arm.Writes() != writes {
		t.Fatal("converged soft delete was written again")
	}
	ensure(&azureapi.SoftDeleteConfig{})
	if policy("deleteRetentionPolicy") != 0.0 {
		t.Fatalf("blob service %v; want soft delete off", arm.BlobService(account))
	}
}
