// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command incumbent-aws runs gardener-extension-provider-aws v1.73.0's own BackupBucket and
// BackupEntry controllers, unchanged, in a controller-runtime manager, as its extension does with
// every other controller disabled (cmd/gardener-extension-provider-aws/app/app.go: the scheme of
// :138-146, the controllers' AddToManagerWithOptions). It is a module of its own, so that the
// incumbent's dependency versions (gardener v1.145.0, controller-runtime v0.23.3) never enter the
// main go.mod. The S3 endpoint is not an input of the incumbent's code: aws-sdk-go-v2's
// LoadDefaultConfig (pkg/aws/client/client.go:122 at v1.73.0) reads AWS_ENDPOINT_URL_S3 from the
// environment, which the test sets to its MinIO proxy.
//
// Usage: incumbent-aws --kubeconfig <file>; it runs until SIGTERM/SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/install"
	"github.com/gardener/gardener-extension-provider-aws/pkg/controller/backupbucket"
	"github.com/gardener/gardener-extension-provider-aws/pkg/controller/backupentry"
	extensionscontroller "github.com/gardener/gardener/extensions/pkg/controller"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "incumbent-aws:", err)
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
