// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdendpoint

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionswebhook "github.com/gardener/gardener/extensions/pkg/webhook"
	"github.com/gardener/gardener/extensions/pkg/webhook/certificates"
	extensionscmdwebhook "github.com/gardener/gardener/extensions/pkg/webhook/cmd"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Name is the webhook's name (--disable-webhooks takes it) and, with a slash, its path.
const Name = "etcd-store-endpoint"

// ConfigName is the name of the seed's MutatingWebhookConfiguration of the binary of type typ.
// kube-apiserver calls the configurations in the order of their names: this one
// ("gardener-extension-backup-gcp") comes before provider-gcp's ("gardener-extension-provider-gcp"),
// and the reinvocation policy makes the order irrelevant (docs/etcd-backup-secret.md).
func ConfigName(typ string) string { return "gardener-extension-backup-" + typ }

// NewWebhook is the webhook of the binary of p: Etcds created or updated in the shoot namespaces
// whose backup provider is p's type (the label gardenlet sets, backup.gardener.cloud/provider; the
// namespace selector gardener's own backup webhooks use, controlplane.KindBackup). Its
// failurePolicy is Fail: an Etcd admitted without the field while it is down would change
// etcd-backup-restore's arguments and roll etcd's pods, once without the flag and again with it;
// gardenlet retries a refused Etcd. It is reinvoked IfNeeded: when a later webhook (provider-gcp's
// seedprovider sets the same field, without reinvocation) changes the Etcd, this one runs again
// and its endpoint, where it has one, is the one that stays.
func NewWebhook(mgr manager.Manager, p provider.Provider, classes []extensionsv1alpha1.ExtensionClass) *extensionswebhook.Webhook {
	h := Handler{Provider: p, Reader: mgr.GetClient(), ExtensionClasses: classes, Log: log.Log.WithName(Name + "-webhook")}
	return &extensionswebhook.Webhook{
		Name:    Name,
		Path:    "/" + Name,
		Action:  extensionswebhook.ActionMutating,
		Target:  extensionswebhook.TargetSeed,
		Types:   []extensionswebhook.Type{{Obj: &druidcorev1alpha1.Etcd{}}},
		Webhook: &admission.Webhook{Handler: h, RecoverPanic: new(true)},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: v1beta1constants.LabelBackupProvider, Operator: metav1.LabelSelectorOpIn, Values: []string{p.Type()}},
		}},
		FailurePolicy: new(admissionregistrationv1.Fail),
	}
}

// Options are where the webhook is registered and how its certificates are kept: gardener's
// webhook flags (--webhook-config-mode, -url, -service-port, -namespace, -owner-namespace).
type Options struct {
	Server extensionscmdwebhook.ServerConfig
	// ExtensionClasses are the controllers' classes.
	ExtensionClasses []extensionsv1alpha1.ExtensionClass
}

// AddToManager serves the webhook on mgr's webhook server and registers it in the seed as
// gardener's extensions library does for seed webhooks (webhook/cmd AddToManagerConfig), with one
// difference the library cannot express: reinvocationPolicy IfNeeded. With a
// --webhook-config-namespace, gardener's certificate management keeps a CA and a server
// certificate in that namespace, rotates them and keeps the configuration's caBundle current;
// without one, a self-signed CA is made at start (tests and local runs; one replica only, as
// every replica would make its own).
func AddToManager(ctx context.Context, mgr manager.Manager, p provider.Provider, o Options) error {
	wh := NewWebhook(mgr, p, o.ExtensionClasses)
	srv, ok := mgr.GetWebhookServer().(*webhook.DefaultServer)
	if !ok {
		return fmt.Errorf("the manager's webhook server is a %T, not controller-runtime's default server", mgr.GetWebhookServer())
	}
	srv.Register(wh.Path, wh.Webhook)

	name := ConfigName(p.Type())
	port := srv.Options.Port
	if o.Server.Mode != extensionswebhook.ModeURL && o.Server.ServicePort > 0 {
		port = o.Server.ServicePort
	}
	configs, _, err := extensionswebhook.BuildWebhookConfigs([]*extensionswebhook.Webhook{wh}, mgr.GetClient(), o.Server.Namespace, name, false, port, o.Server.Mode, o.Server.URL, nil, false)
	if err != nil {
		return fmt.Errorf("building the webhook configuration: %w", err)
	}
	for i := range configs.MutatingWebhookConfig.Webhooks {
		configs.MutatingWebhookConfig.Webhooks[i].ReinvocationPolicy = new(admissionregistrationv1.IfNeededReinvocationPolicy)
	}

	if o.Server.Namespace == "" {
		caBundle, err := certificates.GenerateUnmanagedCertificates(name, false, srv.Options.CertDir, o.Server.Mode, o.Server.URL)
		if err != nil {
			return fmt.Errorf("generating the webhook's certificates: %w", err)
		}
		return mgr.Add(registration{configs: configs, caBundle: caBundle, mgr: mgr, owner: o.Server.OwnerNamespace})
	}
	// The CA bundle is injected by the certificate reconciler, which runs beside the registration:
	// each gets its own copy, as reconciling reads the cluster's object into the one it is given.
	if err := mgr.Add(registration{configs: *configs.DeepCopy(), mgr: mgr, owner: o.Server.OwnerNamespace}); err != nil {
		return err
	}
	return certificates.AddCertificateManagementToManager(ctx, mgr, nil, clock.RealClock{}, configs, &extensionswebhook.Configs{}, &atomic.Value{}, nil, "", name, false, o.Server.Namespace, o.Server.Mode, o.Server.URL)
}

// registration writes the webhook configuration once, by the leader.
type registration struct {
	configs  extensionswebhook.Configs
	caBundle []byte
	mgr      manager.Manager
	owner    string
}

func (registration) NeedLeaderElection() bool { return true }

func (r registration) Start(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if err = extensionswebhook.ReconcileSeedWebhookConfig(ctx, r.mgr.GetClient(), r.configs.MutatingWebhookConfig, r.owner, r.caBundle); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("registering the webhook configuration %s: %w", r.configs.MutatingWebhookConfig.Name, err)
}
