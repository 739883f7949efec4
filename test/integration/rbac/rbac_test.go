// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package rbac_test proves the chart's RBAC sufficient and minimal: the real controllers run with
// a client that impersonates the chart's service account, bound only by the chart's roles, on a
// real kube-apiserver (envtest authorizes with RBAC), and go through a bucket's and an entry's
// whole life; with one rule taken away, they fail.
package rbac_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// memProvider serves type "aws" from an in-memory store that also issues credentials, so that
// every Kubernetes access of the controllers (generated secrets included) is exercised; the
// chart's RBAC does not depend on the cloud.
type memProvider struct{ store *memstore.Store }

type issuing struct{}

func (issuing) IssueCredential(_ context.Context, _ string, inUse []string) (objectstore.Credential, error) {
	return objectstore.Credential{ID: fmt.Sprintf("k%d", len(inUse)+1), Data: map[string][]byte{"key": []byte("generated")}}, nil
}
func (issuing) RevokeCredentials(context.Context, string, []string) error           { return nil }
func (issuing) Location(context.Context) (string, error)                            { return "test", nil }
func (issuing) HeldIn(context.Context, string, map[string][]byte) ([]string, error) { return nil, nil }
func (issuing) CredentialReach(string) string                                       { return "test" }

func (p memProvider) Type() string { return "aws" }

// Decode asks every bucket for generated credentials.
func (p memProvider) Decode([]byte) (*controllertest.Config, error) {
	return &controllertest.Config{Generated: &credentials.Settings{Issuer: "mem"}}, nil
}
func (p memProvider) ValidateBucketName(string) error { return nil }
func (p memProvider) NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error) {
	return p.store, nil
}
func (p memProvider) NewManagement(context.Context, provider.Credentials, *controllertest.Config) (objectstore.Management, error) {
	return p.store, nil
}
func (p memProvider) NewWriter(context.Context, provider.Credentials) (objectstore.Writer, error) {
	return p.store, nil
}
func (p memProvider) NewIssuer(context.Context, provider.Credentials, *controllertest.Config, string) (objectstore.CredentialIssuer, error) {
	return issuing{}, nil
}
func (p memProvider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return data, nil
}
func (memProvider) Flags() provider.Flags { return nil }

const namespace = "extension-backup"

// chartIdentity applies the chart's service accounts and roles (edit may change the rules of the
// controllers' ClusterRole first) and returns a config that impersonates the controllers' service
// account.
func chartIdentity(edit func(rules []any) []any) func(*rest.Config) (*rest.Config, error) {
	return chartIdentityOf(map[string]any{"provider": "aws"}, edit)
}

// chartIdentityOf is chartIdentity of the chart rendered with values.
func chartIdentityOf(values map[string]any, edit func(rules []any) []any) func(*rest.Config) (*rest.Config, error) {
	return func(admin *rest.Config) (*rest.Config, error) {
		c, err := client.New(admin, client.Options{})
		if err != nil {
			return nil, err
		}
		objs, err := charts.Render(namespace, values)
		if err != nil {
			return nil, err
		}
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
		if err := c.Create(context.Background(), ns); err != nil {
			return nil, err
		}
		// Every seed has the garden namespace; the chart's Role for the copies' credentials lives there.
		garden := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "garden"}}}
		if err := c.Create(context.Background(), garden); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		var sa string // the controllers', not the restore drills'
		for _, o := range objs {
			if o.GetKind() == "ServiceAccount" && !strings.HasSuffix(o.GetName(), "-restore-drill") {
				sa = o.GetName()
			}
		}
		editControllers := func(role string, rules []any) []any {
			if edit == nil || role != sa {
				return rules
			}
			return edit(rules)
		}
		if err := framework.ApplyChartRBAC(context.Background(), c, objs, editControllers); err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(admin)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: framework.ServiceAccountUser(namespace, sa),
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		}
		return cfg, nil
	}
}

func TestChartRBACIsSufficient(t *testing.T) {
	store := memstore.New(100)
	env, err := framework.StartWith(memProvider{store}, "local", framework.Options{ManagerConfig: chartIdentity(nil), LeaderElectionNamespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()

	bb := env.CreateBucket(t, framework.UniqueName("rbac-"), map[string][]byte{"any": []byte("x")}, "")
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled under the chart's RBAC", framework.Succeeded)
	if bb.Status.GeneratedSecretRef == nil {
		t.Fatal("no generated secret published")
	}
	// The probe reads both secrets, writes the condition and emits an event.
	env.WaitFor(t, bb, time.Minute, "bucket probed under the chart's RBAC", framework.Available(gardencorev1beta1.ConditionTrue, "Available", "generated credentials"))
	if !env.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonBucketAvailable, bb.Name, 10*time.Second) {
		t.Errorf("no %s event", backupbucket.ReasonBucketAvailable)
	}
	shoot := framework.UniqueName("shoot--rbac--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, map[string][]byte{"key": []byte("generated")})
	env.WaitFor(t, be, time.Minute, "entry reconciled under the chart's RBAC", framework.Succeeded)
	if keys, _ := env.SecretKeys(t, shoot, "etcd-backup"); !slices.Contains(keys, "bucketName") {
		t.Fatalf("etcd-backup keys %v", keys)
	}
	// The inventory finds a stale snapshot and reads the shoot's Cluster: hibernated, so not stale.
	staleSnapshot(t, env, store, be)
	env.WaitFor(t, be, time.Minute, "entry judged under the chart's RBAC", fresh(gardencorev1beta1.ConditionUnknown, entryinfo.ReasonShootHibernated))
	neighbours := framework.FillEntry(t, store, bb.Name, shoot+"--1/", 50)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store, bb.Name, neighbours)
	env.DeleteAndWaitGone(t, bb, time.Minute)
	err = env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: bb.Status.GeneratedSecretRef.Namespace, Name: bb.Status.GeneratedSecretRef.Name}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("generated secret after the bucket's deletion: %v", err)
	}
}

// staleSnapshot writes a two days old full snapshot into the entry's prefix and hibernates its
// shoot: the inventory's verdict is stale, which it then checks against the shoot's Cluster.
func staleSnapshot(t *testing.T, env *framework.Env, store *memstore.Store, be *extensionsv1alpha1.BackupEntry) {
	t.Helper()
	key := fmt.Sprintf("%s/etcd-main/v2/Full-00000000-00000001-%d", be.Name, time.Now().Add(-48*time.Hour).Unix())
	if err := store.PutObject(framework.Ctx(t), be.Spec.BucketName, key, []byte("snapshot")); err != nil {
		t.Fatal(err)
	}
	env.EnsureCluster(t, be.Name, true)
}

// fresh checks an entry's BackupsFresh condition.
func fresh(status gardencorev1beta1.ConditionStatus, reason string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		be, ok := obj.(*extensionsv1alpha1.BackupEntry)
		if !ok {
			return false
		}
		c := v1beta1helper.GetCondition(be.Status.Conditions, entryinventory.ConditionBackupsFresh)
		return c != nil && c.Status == status && c.Reason == reason
	}
}

func TestChartRBACWithoutGettingClustersFails(t *testing.T) {
	withoutClusters := func(rules []any) []any {
		var kept []any
		for _, r := range rules {
			if fmt.Sprint(r.(map[string]any)["resources"]) != "[clusters]" {
				kept = append(kept, r)
			}
		}
		if len(kept) != len(rules)-1 {
			panic(fmt.Sprintf("the chart has no rule for clusters alone: %v", rules))
		}
		return kept
	}
	store := memstore.New(100)
	env, err := framework.StartWith(memProvider{store}, "local", framework.Options{ManagerConfig: chartIdentity(withoutClusters)})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	bb := env.CreateBucket(t, framework.UniqueName("rbac-"), map[string][]byte{"any": []byte("x")}, "")
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	shoot := framework.UniqueName("shoot--rbac--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, map[string][]byte{"key": []byte("generated")})
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	env.WaitFor(t, be, time.Minute, "entry counted", fresh(gardencorev1beta1.ConditionUnknown, inventory.ReasonNoSnapshotYet))
	staleSnapshot(t, env, store, be)
	// The hibernated shoot's excuse needs its Cluster, which the controllers may not read: the
	// stale verdict stands, saying that it could not be checked (never a condition left green).
	env.WaitFor(t, be, time.Minute, "stale, hibernation unknown", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, entryinventory.ConditionBackupsFresh)
		return c != nil && c.Status == gardencorev1beta1.ConditionFalse && strings.Contains(c.Message, "hibernated or gone is unknown") && strings.Contains(c.Message, "forbidden")
	})
	if fresh(gardencorev1beta1.ConditionUnknown, entryinfo.ReasonShootHibernated)(be) {
		t.Fatal("the entry was judged hibernated without reading its Cluster")
	}
	env.DeleteAndWaitGone(t, be, time.Minute)
	env.DeleteAndWaitGone(t, bb, time.Minute)
}

func TestChartRBACWithoutCreatingSecretsFails(t *testing.T) {
	withoutSecretCreate := func(rules []any) []any {
		for _, r := range rules {
			rule := r.(map[string]any)
			if fmt.Sprint(rule["resources"]) == "[secrets]" {
				var verbs []any
				for _, v := range rule["verbs"].([]any) {
					if v != "create" {
						verbs = append(verbs, v)
					}
				}
				rule["verbs"] = verbs
			}
		}
		return rules
	}
	env, err := framework.StartWith(memProvider{memstore.New(100)}, "local", framework.Options{ManagerConfig: chartIdentity(withoutSecretCreate)})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	bb := env.CreateBucket(t, framework.UniqueName("rbac-"), map[string][]byte{"any": []byte("x")}, "")
	env.WaitFor(t, bb, time.Minute, "bucket failing to write its generated secret", func(o extensionsv1alpha1.Object) bool {
		le := o.GetExtensionStatus().GetLastError()
		return le != nil && strings.Contains(le.Description, "forbidden")
	})
	env.Forget(t, bb)
}
