// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command incumbent-gcp runs gardener-extension-provider-gcp v1.53.4's own BackupBucket and
// BackupEntry controllers, unchanged, in a controller-runtime manager, as its extension does with
// every other controller disabled (cmd/gardener-extension-provider-gcp/app/app.go: the scheme of
// :186-191, the controllers' AddToManagerWithOptions). It is a module of its own, so that the
// incumbent's dependency versions (gardener v1.145.0, controller-runtime v0.23.3) never enter the
// main go.mod. The storage endpoint is not an input of the incumbent's code
// (pkg/gcp/client/storage.go:38-45 passes only credentials to storage.NewClient):
// cloud.google.com/go/storage's NewClient reads STORAGE_EMULATOR_HOST from the environment, which
// the test sets to its GCS front; the service-account key's token_uri is the front's.
//
// Usage: incumbent-gcp --kubeconfig <file>; it runs until SIGTERM/SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/install"
	"github.com/gardener/gardener-extension-provider-gcp/pkg/controller/backupbucket"
	"github.com/gardener/gardener-extension-provider-gcp/pkg/controller/backupentry"
	extensionscontroller "github.com/gardener/gardener/extensions/pkg/controller"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "incumbent-gcp:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the seed (envtest)")
	flag.Parse()
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
