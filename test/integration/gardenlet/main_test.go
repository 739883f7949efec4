// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package gardenlet_test runs gardener's own controllers against the extension: gardener
// v1.150.0's real gardener-apiserver (in-process, gardener's test/envtest) is the garden,
// gardenlet's real BackupBucket and BackupEntry controllers run in this process, and the real aws
// binary runs as a process against a second API server (the seed) and MinIO. Every scenario
// asserts what gardenlet shows on the core resources in the garden, not only what the extension
// did in the seed. TestProviders runs one set of cases for every provider (aws, gcp, azure,
// openstack), each with its own binary, stand-in and two seeds (providers_test.go).
//
// Two API servers, not one: gardenlet's garden copy of a bucket's generated secret
// (garden/generated-bucket-<name>) and the extension's own generated secret in the seed have the
// same name; in one cluster they would be one object.
package gardenlet_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener/gardener/pkg/api/indexer"
	gardenletconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/gardenlet/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/gardener/gardener/pkg/client/kubernetes"
	bbcontroller "github.com/gardener/gardener/pkg/gardenlet/controller/backupbucket"
	becontroller "github.com/gardener/gardener/pkg/gardenlet/controller/backupentry"
	gardenerenvtest "github.com/gardener/gardener/test/envtest"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	region = "eu-central-1"
	// seedA is the seed of every bucket but a migration's target bucket and of the entries before a
	// migration; seedB is the target of the migrations. Each is its own API server with its own
	// extension process and gardenlet (see seedWorld).
	seedA, seedB = "seed-a", "seed-b"
	// gardenNamespace is gardenlet's garden namespace, in the garden and in the seed.
	gardenNamespace = "garden"
	// startTimeout: an in-process gardener-apiserver and its APIServices on 2 shared cores.
	startTimeout = 3 * time.Minute
)

// seedWorld is one seed as gardener has it: its own API server, the provider binary running
// against it, and its gardenlet (BackupBucket and BackupEntry controllers for that seed name only).
// A BackupBucket exists on its own seed only; a migration's "source-" entry on the target seed
// names a bucket whose BackupBucket lives on the other seed, as on a real pair of seeds.
type seedWorld struct {
	name   string
	client client.Client
	ext    *stack.Extension
	fw     *framework.Env // store helpers over this seed
}

// The shared stack, started once by TestMain.
var (
	garden client.Client // the garden: core.gardener.cloud through gardener-apiserver
	seeds  = map[string]*seedWorld{}
	seed   client.Client // seed-a's API server: extension resources, secrets, the binary's world
	minio  *awsstack.MinIO
	// proxy is in front of MinIO: every credential the test hands out names it as the endpoint, so
	// that the store can be made unreachable (scenario e).
	proxy *stack.Proxy
	fw    *framework.Env   // store helpers over seed-a
	ext   *stack.Extension // seed-a's extension
	// gardenCfg reaches the garden; workDir holds the binaries and the seeds' files (providers_test.go
	// starts the other providers' seeds there).
	gardenCfg *rest.Config
	workDir   string
	// setupErr is why the stack did not start; every test fails with it.
	setupErr error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv("TEST_LOG") != "" {
		logf.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	} else {
		logf.SetLogger(logr.Discard())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := startStack(ctx)
	defer stop()
	if err != nil {
		setupErr = err
	}
	return m.Run()
}

// requireStack fails the test when the shared stack did not start.
func requireStack(t *testing.T) {
	t.Helper()
	if setupErr != nil {
		t.Fatalf("the garden, seed, MinIO, the extension or gardenlet did not start: %v", setupErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range slices.Sorted(maps.Keys(seeds)) {
				if w := seeds[name]; w != nil {
					t.Logf("%s extension log (last 80 lines):\n%s", name, logTail(w.ext.LogPath, 80))
				}
			}
		}
	})
}

// logTail is the last n lines of a log file.
func logTail(path string, n int) string {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startStack starts MinIO and the proxy, the garden (gardener-apiserver) and the two seeds
// (startSeed). stop undoes what started.
func startStack(ctx context.Context) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	dir, err := os.MkdirTemp("", "geb-gardenlet-")
	if err != nil {
		return stop, err
	}
	workDir = dir
	stops = append(stops, func() { _ = os.RemoveAll(dir) })

	binary, err := stack.BuildBinary(dir, "aws")
	if err != nil {
		return stop, err
	}
	if minio, err = awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region}); err != nil {
		return stop, err
	}
	stops = append(stops, minio.Stop)
	if proxy, err = stack.StartProxy(minio.Endpoint, stack.ProxyOptions{}); err != nil {
		return stop, err
	}
	stops = append(stops, proxy.Close)

	// The garden.
	assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		return stop, err
	}
	gardenEnv := &gardenerenvtest.GardenerTestEnvironment{
		Environment: &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: startTimeout, ControlPlaneStopTimeout: time.Minute},
		GardenerAPIServer: &gardenerenvtest.GardenerAPIServer{
			// As gardener's own backupbucket suite: no Seed, Project, ControllerRegistration or
			// deletion confirmation is needed for the two controllers under test.
			Args:         []string{"--disable-admission-plugins=DeletionConfirmation,ExtensionLabels,ExtensionValidator,ResourceReferenceManager", "--log-level=error"},
			StartTimeout: startTimeout, StopTimeout: time.Minute,
			Out: io.Discard, Err: io.Discard,
		},
	}
	gardenCfg, err = gardenEnv.Start()
	if err != nil {
		return stop, fmt.Errorf("starting the garden (gardener-apiserver): %w", err)
	}
	stops = append(stops, func() { _ = gardenEnv.Stop() })
	if garden, err = client.New(gardenCfg, client.Options{Scheme: kubernetes.GardenScheme}); err != nil {
		return stop, err
	}

	// The seeds, each with its own extension process and gardenlet.
	bbcontroller.RequeueDurationWhenResourceDeletionStillPresent = time.Second
	becontroller.RequeueDurationWhenResourceDeletionStillPresent = time.Second
	for _, name := range []string{seedA, seedB} {
		w, stopSeed, err := startSeed(ctx, name, binary, filepath.Join(dir, name), &awsprovider.Provider{}, region)
		stops = append(stops, stopSeed)
		if err != nil {
			return stop, fmt.Errorf("%s: %w", name, err)
		}
		seeds[name] = w
	}
	seed, ext = seeds[seedA].client, seeds[seedA].ext
	fw = seeds[seedA].fw
	return stop, garden.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenNamespace}})
}

// startSeed starts one seed: a plain kube-apiserver with the extension CRDs, the provider binary
// against it (as the chart runs it), and gardenlet's BackupBucket and BackupEntry controllers for
// that seed in a manager on it with the garden as a second cluster, as gardenlet runs them. p and
// region are the test's own view of the provider, for its store helpers (seedWorld.fw); flags are
// the binary's provider flags.
func startSeed[C config.ProviderConfig](ctx context.Context, name, binary, dir string, p provider.TestCloud[C], region string, flags ...string) (w *seedWorld, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, stop, err
	}
	seedEnv, seedCfg, err := stack.StartEnvtest()
	if err != nil {
		return nil, stop, fmt.Errorf("starting the seed: %w", err)
	}
	stops = append(stops, func() { _ = seedEnv.Stop() })
	seedScheme, err := app.Scheme()
	if err != nil {
		return nil, stop, err
	}
	w = &seedWorld{name: name}
	if w.client, err = client.New(seedCfg, client.Options{Scheme: seedScheme}); err != nil {
		return nil, stop, err
	}
	w.fw = framework.Attach(w.client, p, region)
	if err := w.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenNamespace}}); err != nil {
		return nil, stop, err
	}

	// The extension, as the chart runs it.
	if w.ext, err = stack.StartExtension(ctx, seedEnv, binary, dir, append([]string{"--bucket-probe-interval", "5s", "--entry-inventory-interval", "10s"}, flags...)...); err != nil {
		return nil, stop, err
	}
	stops = append(stops, func() {
		w.ext.Stop()
		if os.Getenv("TEST_LOG") != "" {
			if b, err := os.ReadFile(filepath.Clean(w.ext.LogPath)); err == nil {
				fmt.Fprintf(os.Stderr, "extension log (%s):\n%s\n", name, b)
			}
		}
	})

	// gardenlet: its controllers in a manager on the seed, the garden as a second cluster.
	mgr, err := manager.New(seedCfg, manager.Options{
		Scheme:                 seedScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The controllers of both seeds' gardenlets run in this process under the same names.
		Controller: ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return nil, stop, err
	}
	gardenCluster, err := cluster.New(gardenCfg, func(o *cluster.Options) { o.Scheme = kubernetes.GardenScheme })
	if err != nil {
		return nil, stop, err
	}
	if err := mgr.Add(gardenCluster); err != nil {
		return nil, stop, err
	}
	// The entry controller lists entries by bucket from the garden cache (gardenlet registers it).
	if err := indexer.AddBackupEntryBucketName(ctx, gardenCluster.GetFieldIndexer()); err != nil {
		return nil, stop, err
	}
	limiter := func() workqueue.TypedRateLimiter[reconcile.Request] {
		return workqueue.NewTypedWithMaxWaitRateLimiter(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](), time.Second)
	}
	if err := (&bbcontroller.Reconciler{
		Config:          gardenletconfigv1alpha1.BackupBucketControllerConfiguration{ConcurrentSyncs: new(5)},
		SeedName:        name,
		GardenNamespace: gardenNamespace,
		RateLimiter:     limiter(),
	}).AddToManager(mgr, gardenCluster, mgr); err != nil {
		return nil, stop, err
	}
	if err := (&becontroller.Reconciler{
		// No grace period before an entry's deletion (gardenlet's default is 24h).
		Config:          gardenletconfigv1alpha1.BackupEntryControllerConfiguration{ConcurrentSyncs: new(5), DeletionGracePeriodHours: new(0)},
		SeedName:        name,
		GardenNamespace: gardenNamespace,
		RateLimiter:     limiter(),
	}).AddToManager(mgr, gardenCluster, mgr); err != nil {
		return nil, stop, err
	}
	mgrCtx, mgrCancel := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	stops = append(stops, func() {
		mgrCancel()
		if err := <-mgrDone; err != nil {
			fmt.Fprintln(os.Stderr, "gardenlet's manager stopped with:", err)
		}
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, startTimeout)
	defer syncCancel()
	if !gardenCluster.GetCache().WaitForCacheSync(syncCtx) {
		return nil, stop, fmt.Errorf("gardenlet's garden cache did not sync")
	}
	return w, stop, nil
}

// coreSucceeded reports whether gardenlet shows a core resource as done: lastOperation of type
// typ (any type if "") Succeeded, no lastError, the current generation observed.
func coreSucceeded(meta metav1.Object, op *gardencorev1beta1.LastOperation, lastErr *gardencorev1beta1.LastError, observed int64, typ gardencorev1beta1.LastOperationType) bool {
	return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && (typ == "" || op.Type == typ) &&
		lastErr == nil && observed == meta.GetGeneration()
}
