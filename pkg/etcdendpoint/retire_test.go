// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdendpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
)

func config(name string, webhooks ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, w := range webhooks {
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.MutatingWebhook{Name: w})
	}
	return c
}

func TestDecide(t *testing.T) {
	ours := etcdendpoint.WebhookName("aws")
	cases := []struct {
		name string
		cfg  *admissionregistrationv1.MutatingWebhookConfiguration
		want etcdendpoint.Verdict
		why  string
	}{
		{name: "none", want: etcdendpoint.Absent},
		{name: "an earlier version's registration", cfg: config("gardener-extension-backup-aws", ours), want: etcdendpoint.Delete, why: "only the Etcd endpoint webhook"},
		{name: "empty", cfg: config("gardener-extension-backup-aws"), want: etcdendpoint.Delete},
		{name: "another provider binary's webhook under this name", cfg: config("gardener-extension-backup-aws", etcdendpoint.WebhookName("gcp")), want: etcdendpoint.Foreign, why: etcdendpoint.WebhookName("gcp")},
		{name: "someone's webhook beside ours", cfg: config("gardener-extension-backup-aws", ours, "audit.example.com"), want: etcdendpoint.Foreign, why: "audit.example.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := etcdendpoint.Decide(c.cfg, "aws")
			if got != c.want || !strings.Contains(why, c.why) {
				t.Fatalf("got %v (%s); want %v with %q", got, why, c.want, c.why)
			}
		})
	}
	if got := ours; got != "etcd-store-endpoint.gardener-extension-backup-aws.extensions.gardener.cloud" {
		t.Errorf("webhook name %s; want the name earlier versions registered", got)
	}
}

// TestOnce: the earlier versions' configuration is deleted, a foreign one and another binary's
// are left.
func TestOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		objects []client.Object
		want    etcdendpoint.Verdict
		gone    bool
	}{
		{name: "absent", want: etcdendpoint.Absent},
		{name: "ours", objects: []client.Object{config("gardener-extension-backup-aws", etcdendpoint.WebhookName("aws"))}, want: etcdendpoint.Delete, gone: true},
		{name: "foreign", objects: []client.Object{config("gardener-extension-backup-aws", "audit.example.com")}, want: etcdendpoint.Foreign},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := config("gardener-extension-backup-gcp", etcdendpoint.WebhookName("gcp"))
			k := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(c.objects, other)...).Build()
			r := etcdendpoint.Retirement{Client: k, Type: "aws", Log: logr.Discard()}
			v, _, err := r.Once(ctx)
			if err != nil || v != c.want {
				t.Fatalf("got %v, %v; want %v", v, err, c.want)
			}
			err = k.Get(ctx, client.ObjectKey{Name: "gardener-extension-backup-aws"}, &admissionregistrationv1.MutatingWebhookConfiguration{})
			if c.gone != apierrors.IsNotFound(err) && len(c.objects) > 0 {
				t.Fatalf("after the look: %v; want gone %v", err, c.gone)
			}
			if err := k.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
				t.Fatalf("the gcp binary's configuration: %v", err)
			}
		})
	}
}
