// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command incumbent-azure runs gardener-extension-provider-azure v1.62.1's own BackupBucket and
// BackupEntry controllers, unchanged, in a controller-runtime manager, as its extension does with
// every other controller disabled (cmd/gardener-extension-provider-azure/app/app.go: the scheme of
// :185-190, the controllers' AddToManagerWithOptions). It is a module of its own, so that the
// incumbent's dependency versions never enter the main go.mod. provider-azure v1.62.1 requires
// gardener v1.144.2, which the Go module proxy here does not serve (403): this module requires
// gardener v1.145.0 (minimal version selection takes it), the extension library one minor
// version newer than the incumbent's release was built with. Its clouds are fixed in its code
// (AzurePublic, AzureChina, AzureGovernment: pkg/azure/client/helper.go:118-134,
// pkg/azure/client/storage.go:34-51), so it reaches the stand-ins only through an HTTPS proxy
// that serves those hosts (test/stack.Redirect).
//
// Usage: incumbent-azure --kubeconfig <file> [--feature-gates EnableImmutableBuckets=true]; it
// runs until SIGTERM/SIGINT. The feature gates are set as its extension sets them from its
// configuration file's featureGates (app.go:173).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure/install"
	"github.com/gardener/gardener-extension-provider-azure/pkg/controller/backupbucket"
	"github.com/gardener/gardener-extension-provider-azure/pkg/controller/backupentry"
	"github.com/gardener/gardener-extension-provider-azure/pkg/features"
	extensionscontroller "github.com/gardener/gardener/extensions/pkg/controller"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "incumbent-azure:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the seed (envtest)")
	gates := flag.String("feature-gates", "", "provider-azure's feature gates (pkg/features), as key=value pairs")
	flag.Parse()
	if *gates != "" {
		if err := features.ExtensionFeatureGate.Set(*gates); err != nil {
			return err
		}
	}
	log.SetLogger(zap.New(zap.UseDevMode(true)))
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	if err := extensionscontroller.AddToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	if err := install.AddToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	// As the extension's default (the operation annotation is honoured: gardenlet's and the
	// test's gardener.cloud/operation=reconcile triggers a reconcile).
	if err := backupbucket.AddToManagerWithOptions(ctx, mgr, backupbucket.AddOptions{}); err != nil {
		return err
	}
	if err := backupentry.AddToManagerWithOptions(ctx, mgr, backupentry.AddOptions{}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
