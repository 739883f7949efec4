// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdendpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// earlierRegistration is the configuration earlier versions of the aws binary registered (built by
// gardener's BuildWebhookConfigs with failurePolicy Fail and reinvocationPolicy IfNeeded), its
// server gone: url names a port nothing listens on.
func earlierRegistration(t *testing.T) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: etcdendpoint.ConfigName("aws")},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    etcdendpoint.WebhookName("aws"),
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: new(fmt.Sprintf("https://127.0.0.1:%d/%s", port, etcdendpoint.Name))},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"druid.gardener.cloud"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"etcds"}},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "backup.gardener.cloud/provider", Operator: metav1.LabelSelectorOpIn, Values: []string{"aws"}},
			}},
			FailurePolicy:      new(admissionregistrationv1.Fail),
			SideEffects:        new(admissionregistrationv1.SideEffectClassNone),
			ReinvocationPolicy: new(admissionregistrationv1.IfNeededReinvocationPolicy),
			TimeoutSeconds:     new(int32(10)),
		}},
	}
}

// refusedByTheEarlierWebhook is true when err is kube-apiserver's refusal for the earlier
// webhook's sake.
func refusedByTheEarlierWebhook(err error) bool {
	return err != nil && strings.Contains(err.Error(), etcdendpoint.WebhookName("aws"))
}

// chartClient is a client with the chart's ClusterRole only (its ServiceAccount, impersonated).
func chartClient(t *testing.T) client.Client {
	t.Helper()
	ctx := context.Background()
	const ns = "extension-backup"
	objs, err := charts.Render(ns, map[string]any{"provider": "aws"})
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	sa := ""
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount":
			sa = o.GetName()
		case "ClusterRole", "ClusterRoleBinding":
		default:
			continue
		}
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if sa == "" {
		t.Fatal("the chart renders no ServiceAccount")
	}
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa), Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	out, err := client.New(c, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEarlierRegistrationRetired: the configuration an earlier version registered, with nothing
// serving it (its pods replaced by this version's, or killed), refuses every Etcd write of the
// provider's shoot namespaces, etcd-druid's finalizer removal included; the retirement, running
// with the chart's RBAC only, deletes it, also when an earlier replica re-creates it, and the
// writes go through. With the retirement killed during Etcd writes, every write goes through
// unchanged: nothing of this extension is on their path.
func TestEarlierRegistrationRetired(t *testing.T) {
	ctx := context.Background()
	held, err := deploy(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	if err := holdWithFinalizer(ctx, held); err != nil {
		t.Fatal(err)
	}

	earlier := earlierRegistration(t)
	if err := k8s.Create(ctx, earlier.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var last error
	waitFor(t, "kube-apiserver to call the earlier webhook", func() bool {
		_, last = deploy(ctx, "probe")
		return refusedByTheEarlierWebhook(last)
	})
	// The freeze: the terminating Etcd stays, a new one cannot be created.
	if err := k8s.Delete(ctx, held); err != nil {
		t.Fatal(err)
	}
	if err := release(ctx, held); !refusedByTheEarlierWebhook(err) {
		t.Fatalf("etcd-druid's finalizer removal under the earlier registration: %v; want refused (else this test proves nothing)", err)
	}
	if _, err := deploy(ctx, "new"); !refusedByTheEarlierWebhook(err) {
		t.Fatalf("a new Etcd under the earlier registration: %v; want refused", err)
	}

	// The retirement, as the binary runs it, with the chart's permissions.
	rctx, kill := context.WithCancel(ctx)
	defer kill()
	done := make(chan error, 1)
	go func() {
		done <- etcdendpoint.Retirement{Client: chartClient(t), Type: "aws", Interval: 100 * time.Millisecond, Log: logr.Discard()}.Start(rctx)
	}()
	gone := func() bool {
		err := k8s.Get(ctx, client.ObjectKey{Name: earlier.Name}, &admissionregistrationv1.MutatingWebhookConfiguration{})
		return apierrors.IsNotFound(err)
	}
	waitFor(t, "the earlier registration to be retired", gone)
	waitFor(t, "etcd-druid's finalizer removal to go through", func() bool {
		last = release(ctx, held)
		return last == nil
	})
	waitFor(t, "the released Etcd to be gone", func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(held), held))
	})
	fresh, err := deploy(ctx, "new")
	if err != nil {
		t.Fatalf("a new Etcd after the retirement: %v", err)
	}

	// A replica of the earlier version still running in a rolling update re-creates it.
	if err := k8s.Create(ctx, earlierRegistration(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the re-created registration to be retired", gone)
	waitFor(t, "kube-apiserver to call it no more", func() bool {
		_, last = deploy(ctx, "new")
		return last == nil
	})

	// Killed during Etcd writes: creates, updates and finalizer removals go through, and no spec
	// changes but what was written.
	var writes []*druidcorev1alpha1.Etcd
	for i := range 20 {
		if i == 10 {
			kill()
			if err := <-done; err != nil {
				t.Errorf("the retirement ended with %v", err)
			}
		}
		e, err := deploy(ctx, fmt.Sprintf("write-%d", i%4))
		if err != nil {
			t.Fatalf("write %d (retirement killed: %v): %v", i, i >= 10, err)
		}
		if i%4 == 3 {
			if err := holdWithFinalizer(ctx, e); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			if err := k8s.Delete(ctx, e); err != nil {
				t.Fatal(err)
			}
			if err := release(ctx, e); err != nil {
				t.Fatalf("finalizer removal %d (retirement killed: %v): %v", i, i >= 10, err)
			}
			waitFor(t, e.Name+" to be gone", func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(e), e)) })
			continue
		}
		writes = append(writes, e)
	}
	for _, e := range append(writes, fresh) {
		if e.Generation != 1 || e.Spec.Backup.Store.EndpointOverride != nil {
			t.Errorf("Etcd %s: generation %d, endpointOverride %v; want 1 and none", e.Name, e.Generation, e.Spec.Backup.Store.EndpointOverride)
		}
	}
}
