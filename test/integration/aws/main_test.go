// Package aws_test runs the real aws controllers in a manager against a real kube-apiserver and
// etcd (envtest) and a real MinIO, driven the way gardenlet drives them.
package aws_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	extensionscmd "github.com/gardener/gardener/extensions/pkg/controller/cmd"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// reconcileTimeout is short, so that long deletions must prove they resume across reconciles.
const reconcileTimeout = 8 * time.Second

var (
	k8s   client.Client
	minio *stack.MinIO
	// proxy sits in front of MinIO and plays "owned by another account" for buckets named foreign-*.
	proxy *stack.Proxy
)

// foreignPrefix names buckets the proxy plays as owned by another account.
const foreignPrefix = "foreign-"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if minio, err = stack.StartMinIO(ctx, stack.MinIOOptions{Region: "eu-central-1"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer minio.Stop()
	if proxy, err = stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ForeignPrefix: foreignPrefix}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer proxy.Close()

	logger := logr.Discard()
	if os.Getenv("TEST_LOG") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	}
	appCfg := app.Config{
		REST:     &extensionscmd.RESTConfig{Config: cfg},
		Manager:  &extensionscmd.ManagerConfig{MetricsBindAddress: "0", HealthBindAddress: "0", Logger: logger},
		Deletion: controller.DeletionOptions{Parallelism: 4},
	}
	mgr, err := app.NewManager(appCfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := &awsprovider.Provider{}
	ctrlOpts := ctrlcontroller.Options{MaxConcurrentReconciles: 5, ReconciliationTimeout: reconcileTimeout}
	if err := backupbucket.AddToManager(ctx, mgr, p, controller.AddOptions{Controller: ctrlOpts, Deletion: appCfg.Deletion}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := backupentry.AddToManager(ctx, mgr, p, controller.AddOptions{Controller: ctrlOpts, Deletion: appCfg.Deletion}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	k8s, err = client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
