// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package etcdendpoint_test proves, on a real kube-apiserver (envtest) with etcd-druid's own Etcd
// CRD, that this extension is not on the path of any Etcd write: the binary neither changes an
// Etcd's spec across a switch and a hand-back nor refuses a write while it is down, and the
// configuration of the Etcd endpoint webhook that earlier versions registered is retired
// (pkg/etcdendpoint). gardenlet's Etcd writes are played with gardener's own patch function
// (controllerutils.GetAndCreateOrMergePatch, as gardener v1.150.0's pkg/component/etcd/etcd does);
// the spec it writes is a stand-in of gardenlet's, with the backup store as gardener sets it.
package etcdendpoint_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	druidcrds "github.com/gardener/etcd-druid/api/core/v1alpha1/crds"
	"github.com/gardener/gardener/pkg/controllerutils"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const (
	// namespace is a shoot namespace of this seed whose backup provider is aws, as gardenlet
	// labels it.
	namespace = "shoot--dev--endpoint"
	bucket    = "bucket-endpoint"
	// druidFinalizer is etcd-druid's finalizer on an Etcd.
	druidFinalizer = "druid.gardener.cloud/etcd-druid"
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
)

func TestMain(m *testing.M) {
	env, c, err := stack.StartEnvtest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEnv, cfg = env, c
	code := 1
	if err := setUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = env.Stop()
	os.Exit(code)
}

// setUp installs etcd-druid's own Etcd CRD (the CEL variant, as for Kubernetes >= 1.29) and the
// shoot namespace.
func setUp() error {
	all, err := druidcrds.GetAll("1.36")
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := sigsyaml.Unmarshal([]byte(all[druidcrds.ResourceNameEtcd]), crd); err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		return fmt.Errorf("installing the Etcd CRD: %w", err)
	}
	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	if err := druidcorev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"backup.gardener.cloud/provider": "aws"}}}
	return k8s.Create(context.Background(), ns)
}

// deploy writes the Etcd name as gardenlet's shoot reconcile does: GetAndCreateOrMergePatch with
// the operation and timestamp annotations and the whole backup store, so that a field gardenlet
// does not set is dropped by the merge patch.
func deploy(ctx context.Context, name string) (*druidcorev1alpha1.Etcd, error) {
	e := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	_, err := controllerutils.GetAndCreateOrMergePatch(ctx, k8s, e, func() error {
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, "gardener.cloud/operation", "reconcile")
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, "gardener.cloud/timestamp", time.Now().UTC().Format(time.RFC3339Nano))
		e.Spec.Replicas = 1
		e.Spec.Labels = map[string]string{"app": "etcd-statefulset", "role": "main"}
		e.Spec.Backup.Store = &druidcorev1alpha1.StoreSpec{
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
			Container: new(bucket),
			Provider:  new(druidcorev1alpha1.StorageProvider("aws")),
			Prefix:    "shoot--dev--endpoint--uid/etcd-main",
		}
		return nil
	})
	return e, err
}

// holdWithFinalizer adds etcd-druid's finalizer to e, as etcd-druid does when it takes an Etcd.
func holdWithFinalizer(ctx context.Context, e *druidcorev1alpha1.Etcd) error {
	patch := client.MergeFrom(e.DeepCopy())
	e.Finalizers = append(e.Finalizers, druidFinalizer)
	return k8s.Patch(ctx, e, patch)
}

// release removes etcd-druid's finalizer from e, as etcd-druid does when it has cleaned up a
// deleted Etcd (an UPDATE).
func release(ctx context.Context, e *druidcorev1alpha1.Etcd) error {
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(e), e); err != nil {
		return err
	}
	patch := client.MergeFromWithOptions(e.DeepCopy(), client.MergeFromWithOptimisticLock{})
	e.Finalizers = slices.DeleteFunc(e.Finalizers, func(f string) bool { return f == druidFinalizer })
	return k8s.Patch(ctx, e, patch)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
