// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission

import (
	"context"
	"fmt"

	extensionscmdwebhook "github.com/gardener/gardener/extensions/pkg/webhook/cmd"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	gardenerhealthz "github.com/gardener/gardener/pkg/healthz"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Config is the admission's completed configuration.
type Config struct {
	// Garden reaches the cluster whose Seeds and BackupBuckets are validated, where the webhook
	// configuration is registered: the virtual garden, or the one cluster.
	Garden *rest.Config
	// Runtime, when set, reaches the cluster the pods run in (the virtual garden's runtime
	// cluster), where the certificates' secrets and the leader election lease are kept; nil: the
	// Garden cluster keeps them.
	Runtime *rest.Config
	// Manager are the manager's options (leader election, webhook server, metrics, health).
	Manager manager.Options
	// Webhooks registers the webhooks of Switches and manages their certificates: gardener's
	// webhook library (--webhook-config-mode, --webhook-config-url, --webhook-config-namespace).
	Webhooks *extensionscmdwebhook.AddToManagerConfig
}

// Run serves the webhooks until ctx ends. The leader issues the CA and the server certificate
// with gardener's secrets manager into the secrets of Webhooks.Server.Namespace, rotates them
// and writes the CA bundle into the webhook configuration; every replica loads the server
// certificate from there.
func Run(ctx context.Context, cfg Config) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	// The webhook rules are built from the scheme's kinds (core.gardener.cloud/v1beta1).
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		return err
	}
	opts := cfg.Manager
	opts.Scheme = scheme
	var runtimeCluster cluster.Cluster
	if cfg.Runtime != nil {
		c, err := cluster.New(cfg.Runtime, func(o *cluster.Options) {
			o.Scheme = scheme
			o.Cache.DefaultNamespaces = map[string]cache.Config{cfg.Webhooks.Server.Namespace: {}}
		})
		if err != nil {
			return fmt.Errorf("runtime cluster: %w", err)
		}
		runtimeCluster = c
		opts.LeaderElectionConfig = cfg.Runtime
	} else {
		// Only the certificates' secrets are read, in one namespace: no cluster-wide permission.
		opts.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{cfg.Webhooks.Server.Namespace: {}}},
		}
	}
	mgr, err := manager.New(cfg.Garden, opts)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if runtimeCluster != nil {
		if err := mgr.Add(runtimeCluster); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("runtime-informer-sync", gardenerhealthz.NewCacheSyncHealthz(runtimeCluster.GetCache())); err != nil {
			return err
		}
	}
	if _, err := cfg.Webhooks.AddToManager(ctx, mgr, runtimeCluster); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informer-sync", gardenerhealthz.NewCacheSyncHealthz(mgr.GetCache())); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
