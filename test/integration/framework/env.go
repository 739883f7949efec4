// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	extensionscmdcontroller "github.com/gardener/gardener/extensions/pkg/controller/cmd"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// ReconcileTimeout is short, so that long deletions must prove they resume across reconciles.
const ReconcileTimeout = 8 * time.Second

// Probe and Inventory are how often the probe and the inventory run in tests: often, so that
// every flow runs them beside its own work and the observability flow sees changes within seconds.
var (
	Probe     = backupbucket.ProbeOptions{Interval: 2 * time.Second}
	Inventory = entryinventory.Options{Interval: 10 * time.Second, Thresholds: inventory.DefaultThresholds}
)

// Env is a real kube-apiserver and etcd with one provider's real controllers running in a
// manager, driven as gardenlet drives them (the operation annotation).
type Env struct {
	K8s      client.Client
	Type     string
	Region   string
	provider provider.Provider
	// newWriter builds the provider's Writer, for the tests' fixtures (no controller writes).
	newWriter func(context.Context, provider.Credentials) (objectstore.Writer, error)
	stop      func()
}

// Options change how the controllers run.
type Options struct {
	// ManagerConfig, when set, turns the API server's admin config into the one the controllers'
	// manager uses (for example one impersonating the chart's service account).
	ManagerConfig func(admin *rest.Config) (*rest.Config, error)
	// LeaderElectionNamespace, when set, turns leader election on with its lease there.
	LeaderElectionNamespace string
}

// Start starts envtest and the controllers of c (registered as the binaries register it);
// objects are created in region. Set TEST_LOG to see the controllers' log.
func Start[C config.ProviderConfig](c provider.TestCloud[C], region string) (*Env, error) {
	return StartWith(c, region, Options{})
}

// StartWith is Start with options.
func StartWith[C config.ProviderConfig](c provider.TestCloud[C], region string, o Options) (*Env, error) {
	return StartCloud(Registered(c), region, o)
}

// StartCloud is StartWith for a Cloud registered beforehand (a stand-in's, test/standin).
func StartCloud(c Cloud, region string, o Options) (*Env, error) {
	p := c.Provider
	ctx, cancel := context.WithCancel(context.Background())
	testEnv, cfg, err := stack.StartEnvtest()
	if err != nil {
		cancel()
		return nil, err
	}
	stop := func() { cancel(); _ = testEnv.Stop() }
	mgrCfg := cfg
	if o.ManagerConfig != nil {
		if mgrCfg, err = o.ManagerConfig(cfg); err != nil {
			stop()
			return nil, err
		}
	}
	logger := logr.Discard()
	if os.Getenv("TEST_LOG") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	}
	appCfg := app.Config{
		REST: &extensionscmdcontroller.RESTConfig{Config: mgrCfg},
		Manager: &extensionscmdcontroller.ManagerConfig{MetricsBindAddress: "0", HealthBindAddress: "0", Logger: logger,
			LeaderElection: o.LeaderElectionNamespace != "", LeaderElectionID: "backup-test-leader-election", LeaderElectionNamespace: o.LeaderElectionNamespace},
		Deletion:  options.DeletionOptions{Parallelism: 4},
		Probe:     Probe,
		Inventory: Inventory,
	}
	mgr, err := app.NewManager(appCfg)
	if err != nil {
		stop()
		return nil, err
	}
	opts := options.AddOptions{
		// Names are checked per process; a test may run a second manager.
		Controller: ctrlcontroller.Options{MaxConcurrentReconciles: 5, ReconciliationTimeout: ReconcileTimeout, SkipNameValidation: new(true)},
		Deletion:   appCfg.Deletion,
	}
	if err := backupbucket.AddToManager(ctx, mgr, p, opts); err != nil {
		stop()
		return nil, err
	}
	if err := backupentry.AddToManager(ctx, mgr, p, opts); err != nil {
		stop()
		return nil, err
	}
	// The periodic controllers as the binary adds them, but the restore drill (its child is the
	// binary itself: test/integration/restoredrill runs it).
	for _, c := range []periodic.Controller{backupbucket.ProbeController(appCfg.Probe), entryinventory.InventoryController(appCfg.Inventory)} {
		if err := periodic.Add(mgr, p, opts, c); err != nil {
			stop()
			return nil, err
		}
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	k8s, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		stop()
		return nil, err
	}
	return &Env{K8s: k8s, Type: p.Type(), Region: region, provider: p, newWriter: c.NewWriter, stop: stop}, nil
}

// Attach returns an Env over k8s for controllers that run elsewhere (the binary as a process):
// the helpers create, trigger and wait as they do for the in-process controllers.
func Attach[C config.ProviderConfig](k8s client.Client, c provider.TestCloud[C], region string) *Env {
	return AttachCloud(k8s, Registered(c), region)
}

// AttachCloud is Attach for a Cloud registered beforehand.
func AttachCloud(k8s client.Client, c Cloud, region string) *Env {
	return &Env{K8s: k8s, Type: c.Type(), Region: region, provider: c.Provider, newWriter: c.NewWriter, stop: func() {}}
}

// StoreFor builds the provider's planes (the management plane with the default providerConfig)
// and Writer from secret data, as an entry's deletion does (for example with a bucket's
// generated credentials).
func (e *Env) StoreFor(t *testing.T, data map[string][]byte) conformance.Stores {
	t.Helper()
	s, _ := e.BucketStoreFor(t, data, "")
	return s
}

// BucketStoreFor builds the provider's planes, Writer and issuer as the BackupBucket controller
// does: from the operator's secret data and the bucket's providerConfig, whose
// generatedCredentials name the issuer (nil where it asks for none, or these credentials issue
// none).
func (e *Env) BucketStoreFor(t *testing.T, data map[string][]byte, providerConfig string) (conformance.Stores, objectstore.CredentialIssuer) {
	t.Helper()
	ctx := context.Background()
	var raw []byte
	if providerConfig != "" {
		raw = []byte(providerConfig)
	}
	cfg, err := e.provider.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	creds := provider.Credentials{Data: data, Region: e.Region}
	var s conformance.Stores
	if s.DataPlane, err = e.provider.NewDataPlane(ctx, creds); err != nil {
		t.Fatal(err)
	}
	if s.Management, err = cfg.NewManagement(ctx, creds); err != nil {
		t.Fatal(err)
	}
	if s.Writer, err = e.newWriter(ctx, creds); err != nil {
		t.Fatal(err)
	}
	g := cfg.GenerationSettings()
	if g == nil {
		return s, nil
	}
	issuer, err := cfg.NewIssuer(ctx, creds, g.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	return s, issuer
}

// GeneratedSecret returns the generated secret of a bucket from its default namespace.
func (e *Env) GeneratedSecret(t *testing.T, bucket string) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	return s, e.K8s.Get(Ctx(t), client.ObjectKey{Namespace: "garden", Name: "generated-bucket-" + bucket}, s)
}

// Stop stops the controllers and envtest.
func (e *Env) Stop() { e.stop() }
