// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package app is the command every provider binary runs: gardener's standard extension flags, a
// manager that does not cache secrets, and the provider-neutral BackupBucket and BackupEntry
// controllers for one provider.
package app

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionscmdcontroller "github.com/gardener/gardener/extensions/pkg/controller/cmd"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/seedconfig"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// Defaults of the command's own flags.
const (
	DefaultDeletionParallelism = 8
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst bound the requests to the seed's API server, as
	// gardenlet's own client does (100/130). client-go's default, 5/s per resource type, made a
	// seed with 1,000 new entries wait 20 minutes (make bench-scale).
	DefaultKubeAPIQPS   = 100
	DefaultKubeAPIBurst = 130
)

// Controllers selects what one process of the binary runs (--controllers).
type Controllers string

const (
	// ControllersAll runs every controller in one process, the restore drills' child
	// processes in its container too.
	ControllersAll Controllers = "all"
	// ControllersCore runs every controller but the restore drill, which a process with
	// ControllersRestoreDrill runs (the chart's two Deployments): a drill that runs out of
	// memory then ends in its own container, not in the controllers'.
	ControllersCore Controllers = "core"
	// ControllersRestoreDrill runs only the restore drill, with a follower of the seed
	// configuration (seedconfig.AddFollowerToManager) and a leader election lease of its own
	// (RestoreDrillLeaseSuffix).
	ControllersRestoreDrill Controllers = "restore-drill"
)

// RestoreDrillLeaseSuffix ends the leader election lease of a ControllersRestoreDrill process:
// it is elected apart from the controllers'.
const RestoreDrillLeaseSuffix = "-restore-drill"

// Set implements pflag.Value.
func (c *Controllers) Set(s string) error {
	switch v := Controllers(s); v {
	case ControllersAll, ControllersCore, ControllersRestoreDrill:
		*c = v
		return nil
	}
	return fmt.Errorf("must be one of %s, %s or %s", ControllersAll, ControllersCore, ControllersRestoreDrill)
}

func (c *Controllers) String() string { return string(*c) }

// Type implements pflag.Value.
func (*Controllers) Type() string { return "controllers" }

func (c Controllers) core() bool  { return c != ControllersRestoreDrill }
func (c Controllers) drill() bool { return c != ControllersCore }

// NewCommand returns the command of the provider binary for p, with p's own flags
// (provider.Provider.Flags) beside the common ones. copyStores are the providers a copy of
// another type is written with (Config.CopyStores); their flags are not bound.
func NewCommand(p provider.Provider, copyStores ...provider.Provider) *cobra.Command {
	name := "gardener-extension-backup-" + p.Type()
	var (
		restOpts = &extensionscmdcontroller.RESTOptions{}
		mgrOpts  = &extensionscmdcontroller.ManagerOptions{
			LeaderElection:          true,
			LeaderElectionID:        extensionscmdcontroller.LeaderElectionNameID(name),
			LeaderElectionNamespace: "garden",
		}
		ctrlOpts       = &extensionscmdcontroller.ControllerOptions{MaxConcurrentReconciles: 5}
		reconcilerOpts = &extensionscmdcontroller.ReconcilerOptions{}
		generalOpts    = &extensionscmdcontroller.GeneralOptions{}
		parallelism    = DefaultDeletionParallelism
		kubeAPI        = KubeAPILimits{QPS: DefaultKubeAPIQPS, Burst: DefaultKubeAPIBurst}
		pprofAddress   string
		seedDefaults   string
		seedDeclared   bool
		rehearse       bool
		rehearsalEvery = rehearsal.DefaultInterval
		rehearseDrills bool
		garden         = GardenAccess{Kubeconfig: os.Getenv(rehearsal.EnvGardenKubeconfig), Seed: os.Getenv(rehearsal.EnvSeedName)}
		controllers    = ControllersAll
		// The periodic controllers' options (periodic.Options) are bound and completed
		// (validated) with gardener's, by the aggregator's one loop over them; first, so that a
		// value out of range stops the start before anything is connected.
		probeOpts     = backupbucket.DefaultProbeOptions()
		inventoryOpts = entryinventory.DefaultOptions()
		drillOpts     = restoredrill.DefaultOptions()
		copyOpts      = entrycopy.DefaultOptions()
		aggOpts       = extensionscmdcontroller.NewOptionAggregator(&probeOpts, &inventoryOpts, &drillOpts, &copyOpts, restOpts, mgrOpts, ctrlOpts, reconcilerOpts, generalOpts)
	)
	if f := p.Flags(); f != nil { // completed first: a wrong provider flag is named before the kubeconfig is read
		aggOpts = append(extensionscmdcontroller.OptionAggregator{f}, aggOpts...)
	}
	cmd := &cobra.Command{
		Use:          name,
		Short:        "Gardener BackupBucket and BackupEntry controllers for " + p.Type(),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := aggOpts.Complete(); err != nil {
				return fmt.Errorf("completing options: %w", err)
			}
			if kubeAPI.QPS <= 0 || kubeAPI.Burst < 1 {
				return fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %v and %d", kubeAPI.QPS, kubeAPI.Burst)
			}
			if rehearsalEvery <= 0 {
				return fmt.Errorf("--rehearsal-interval must be positive, got %s", rehearsalEvery)
			}
			if parallelism < 1 {
				return fmt.Errorf("--deletion-parallelism must be at least 1, got %d", parallelism)
			}
			seeded, err := Seeded(p, []byte(seedDefaults))
			if err != nil {
				return fmt.Errorf("--seed-config-defaults: %w", err)
			}
			return Run(cmd.Context(), seeded, Config{
				REST:                      restOpts.Completed(),
				Manager:                   mgrOpts.Completed(),
				Controller:                ctrlOpts.Completed(),
				IgnoreOperationAnnotation: reconcilerOpts.Completed().IgnoreOperationAnnotation,
				ExtensionClasses:          generalOpts.Completed().ExtensionClasses,
				Deletion:                  options.DeletionOptions{Parallelism: parallelism},
				Probe:                     probeOpts,
				Inventory:                 inventoryOpts,
				RestoreDrill:              drillOpts,
				EntryCopy:                 copyOpts,
				KubeAPI:                   kubeAPI,
				PprofBindAddress:          pprofAddress,
				SeedExtensionDeclared:     seedDeclared,
				Rehearse:                  rehearse,
				RehearsalInterval:         rehearsalEvery,
				RehearsalRestoreDrills:    rehearseDrills,
				Garden:                    garden,
				Controllers:               controllers,
				CopyStores:                copyStores,
			})
		},
	}
	aggOpts.AddFlags(cmd.Flags())
	cmd.Flags().Float32Var(&kubeAPI.QPS, "kube-api-qps", kubeAPI.QPS, "Requests per second to the seed's API server (client-side rate limit of each resource type's client).")
	cmd.Flags().IntVar(&kubeAPI.Burst, "kube-api-burst", kubeAPI.Burst, "Requests to the seed's API server allowed in a burst above --kube-api-qps.")
	cmd.Flags().StringVar(&pprofAddress, "pprof-bind-address", "", "Address to serve Go's /debug/pprof on, e.g. 127.0.0.1:6060 (empty: off). Profiles show the process's internals: bind it to localhost or port-forward.")
	cmd.Flags().IntVar(&parallelism, "deletion-parallelism", parallelism, "The most delete requests in flight against one bucket from this process: the entries deleted at once share it (and one deletion never exceeds it).")
	cmd.Flags().StringVar(&seedDefaults, "seed-config-defaults", "", "The landscape's defaults of this extension's seed configuration (the ControllerDeployment's values seedConfigDefaults, which the chart passes): a BackupBucketConfig (JSON or YAML) under every seed's Extension "+decode.ExtensionType(p.Type())+" (docs/migrating.md). One that does not decode stops the start.")
	cmd.Flags().BoolVar(&seedDeclared, "seed-extension-declared", false, "The Seed declares this extension's Extension "+decode.ExtensionType(p.Type())+" in spec.extensions (the chart reads it from gardenlet's values): BackupBuckets and BackupEntries wait until it is applied, never acting on the defaults meanwhile.")
	cmd.Flags().BoolVar(&rehearse, "rehearse", false, "Rehearse the takeover beside the incumbent provider extension: read the BackupBuckets and BackupEntries of this type and their secrets, write none of them, and report for each whether it can be taken over and what the first reconcile would change (ConfigMap <leader-election-namespace>/"+name+"-rehearsal, the condition Rehearsal on the seed's Extension "+decode.ExtensionType(p.Type())+" and, with --garden-kubeconfig, on the rehearsal's ControllerInstallation in the garden, metrics gardener_backup_rehearsal_*). No other controller runs.")
	cmd.Flags().DurationVar(&rehearsalEvery, "rehearsal-interval", rehearsalEvery, "With --rehearse: how often the seed is rehearsed again (each pass reads every BackupBucket and BackupEntry of this type, probes, plans and counts each entry's snapshots).")
	cmd.Flags().BoolVar(&rehearseDrills, "rehearsal-restore-drills", false, "With --rehearse: each pass also runs the restore drill of every BackupEntry, one after the other within the --restore-drill-* caps and deadline, and reports BackupsRestorable (a drill downloads the newest chain of every etcd: off by default). It writes nothing to the entries.")
	cmd.Flags().StringVar(&garden.Kubeconfig, "garden-kubeconfig", garden.Kubeconfig, "With --rehearse: the kubeconfig of the garden (default: $"+rehearsal.EnvGardenKubeconfig+", which gardenlet sets where the ControllerDeployment has injectGardenKubeconfig: true). The condition Rehearsal is then also set on the rehearsal's own ControllerInstallation in the garden, the one named by its namespace extension-<name>. Empty: the report stays on the seed.")
	cmd.Flags().StringVar(&garden.Seed, "seed-name", garden.Seed, "With --rehearse and --garden-kubeconfig: the name of the seed (default: $"+rehearsal.EnvSeedName+", which gardenlet sets); only a ControllerInstallation of this seed is written.")
	cmd.Flags().Var(&controllers, "controllers", "What this process runs: all (every controller), core (all but the restore drill) or restore-drill (only the restore drill, elected with a lease of its own, the leader election ID with the suffix "+RestoreDrillLeaseSuffix+"). The chart runs core and restore-drill in two Deployments, so that a drill's child process that runs out of memory ends in the drill's container.")
	cmd.AddCommand(drill.ChildCommand())
	return cmd
}

// Seeded is p reading this extension's seed configuration live (provider.Seeded), with defaults,
// the landscape's (empty: none), under every seed's Extension.
func Seeded(p provider.Provider, defaults []byte) (*provider.Seeded, error) {
	if s, ok := p.(*provider.Seeded); ok {
		return s, nil
	}
	var incumbentFields []string
	if api, ok := all.APIs()[p.Type()]; ok {
		incumbentFields = api.IncumbentFields()
	}
	return provider.WithSeedConfig(p, defaults, incumbentFields)
}

// Config is a completed configuration.
type Config struct {
	REST                      *extensionscmdcontroller.RESTConfig
	Manager                   *extensionscmdcontroller.ManagerConfig
	Controller                *extensionscmdcontroller.ControllerConfig
	IgnoreOperationAnnotation bool
	ExtensionClasses          []extensionsv1alpha1.ExtensionClass
	Deletion                  options.DeletionOptions
	// Probe, Inventory and RestoreDrill configure the periodic controllers (zero intervals: off).
	Probe        backupbucket.ProbeOptions
	Inventory    entryinventory.Options
	RestoreDrill restoredrill.Options
	// EntryCopy configures the copy of each entry to its bucket's copy (zero interval: off).
	EntryCopy entrycopy.Options
	// KubeAPI limits the requests to the seed's API server (zero: client-go's defaults).
	KubeAPI KubeAPILimits
	// PprofBindAddress serves /debug/pprof when set (empty: off).
	PprofBindAddress string
	// SeedExtensionDeclared is true when the Seed declares this extension's Extension
	// (seedconfig.Options.Declared).
	SeedExtensionDeclared bool
	// Rehearse runs the rehearsal (pkg/controller/rehearsal) and the seed's Extension's
	// controller only, which then asks no object to reconcile.
	Rehearse bool
	// RehearsalInterval is how often the rehearsal runs (zero: rehearsal.DefaultInterval).
	RehearsalInterval time.Duration
	// RehearsalRestoreDrills: the rehearsal drills every entry (rehearsal.Options.Drills) with
	// RestoreDrill's options, restores by this binary's child (drill.SelfRestorer).
	RehearsalRestoreDrills bool
	// Garden is how the rehearsal reaches the garden (zero: it does not).
	Garden GardenAccess
	// Controllers selects what the process runs ("": ControllersAll).
	Controllers Controllers
	// CopyStores are the providers a copy of another type than p's is written with
	// (provider.Seeded.SetCopyStores; none: a copy of p's type only).
	CopyStores []provider.Provider
}

// GardenAccess is the rehearsal's access to the garden: a kubeconfig and the seed's name.
type GardenAccess struct {
	Kubeconfig, Seed string
}

// KubeAPILimits are the client-side rate limits of the clients to the seed's API server.
type KubeAPILimits struct {
	QPS   float32
	Burst int
}

// Scheme returns the scheme the controllers need.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := extensionsv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// A garden's BackupEntry is located through its Garden (entryinfo.LocateEntry).
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// The shoots' Etcds are watched and read, never written (the BackupEntry's two-phase switch).
	if err := druidcorev1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// EtcdStoreOnly is the cache's transform of an Etcd: its name, namespace, UID, resource version
// and generation, and its spec.backup.store; nothing else is read of an Etcd.
func EtcdStoreOnly(obj any) (any, error) {
	etcd, ok := obj.(*druidcorev1alpha1.Etcd)
	if !ok {
		return obj, nil
	}
	kept := &druidcorev1alpha1.Etcd{TypeMeta: etcd.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: etcd.Name, Namespace: etcd.Namespace,
		UID: etcd.UID, ResourceVersion: etcd.ResourceVersion, Generation: etcd.Generation, DeletionTimestamp: etcd.DeletionTimestamp}}
	kept.Spec.Backup.Store = etcd.Spec.Backup.Store
	return kept, nil
}

// NewManager returns a manager whose client reads Secrets from the API server (a seed holds
// thousands of them and the controllers read a few per request, so caching them all would cost
// memory and list permissions for nothing) and whose cache keeps no managedFields.
func NewManager(cfg Config) (manager.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	opts := cfg.Manager.Options()
	if cfg.Controllers == ControllersRestoreDrill && opts.LeaderElectionID != "" {
		opts.LeaderElectionID += RestoreDrillLeaseSuffix
	}
	opts.Scheme = scheme
	opts.PprofBindAddress = cfg.PprofBindAddress
	opts.Client = client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
	// The cache holds every BackupEntry, BackupBucket, Cluster and Namespace of the seed; their
	// managedFields are often the larger half of them and no controller here reads them.
	opts.Cache.DefaultTransform = cache.TransformStripManagedFields()
	// The BackupEntry controller watches the shoots' Etcds for their backup store's container
	// alone (the two-phase switch): the cache keeps nothing else of them.
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.Cache.ByObject[&druidcorev1alpha1.Etcd{}] = cache.ByObject{Transform: EtcdStoreOnly}
	logf.SetLogger(cfg.Manager.Logger)
	restConfig := rest.CopyConfig(cfg.REST.Config)
	if cfg.KubeAPI.QPS > 0 {
		restConfig.QPS, restConfig.Burst = cfg.KubeAPI.QPS, cfg.KubeAPI.Burst
	}
	mgr, err := manager.New(restConfig, opts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informer-sync", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("informers not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// AddControllers adds what cfg.Controllers selects to mgr. The core controllers: the controller
// of the seed's Extension (pkg/controller/seedconfig), which applies the seed configuration to p
// (made a provider.Seeded without defaults where it is not one), the BackupBucket and BackupEntry
// controllers for p, the periodic probe and inventory, and the retirement of the Etcd endpoint
// webhook earlier versions registered (pkg/etcdendpoint). The restore drill: the periodic
// restoredrill controller, and where it runs alone, a follower of the seed configuration the core
// controllers applied.
func AddControllers(ctx context.Context, mgr manager.Manager, p provider.Provider, cfg Config) error {
	seeded, err := Seeded(p, nil)
	if err != nil {
		return err
	}
	if len(cfg.CopyStores) > 0 {
		seeded.SetCopyStores(cfg.CopyStores...)
	}
	p = seeded
	if cfg.Controllers == "" {
		cfg.Controllers = ControllersAll
	}
	seedOpts := seedconfig.Options{
		Declared:      cfg.SeedExtensionDeclared,
		BucketClasses: cfg.ExtensionClasses,
		Controller:    controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: cfg.Controller.Options().SkipNameValidation},
		Rehearsal:     cfg.Rehearse,
	}
	if cfg.Rehearse && cfg.Controllers != ControllersAll {
		return fmt.Errorf("--rehearse runs the rehearsal alone: --controllers=%s does not apply", cfg.Controllers)
	}
	addSeedConfig, what := seedconfig.AddToManager, "controller"
	if !cfg.Controllers.core() {
		addSeedConfig, what = seedconfig.AddFollowerToManager, "follower"
	}
	if err := addSeedConfig(ctx, mgr, seeded, seedOpts); err != nil {
		return fmt.Errorf("adding the %s of the seed's Extension %s: %w", what, decode.ExtensionType(p.Type()), err)
	}
	if cfg.Rehearse {
		r, err := NewRehearser(mgr, p, cfg)
		if err != nil {
			return err
		}
		return mgr.Add(r)
	}
	opts := options.AddOptions{
		Controller:                cfg.Controller.Options(),
		IgnoreOperationAnnotation: cfg.IgnoreOperationAnnotation,
		ExtensionClasses:          cfg.ExtensionClasses,
		Deletion:                  cfg.Deletion,
	}
	var periodics []periodic.Controller
	if cfg.Controllers.core() {
		if err := backupbucket.AddToManager(ctx, mgr, p, opts); err != nil {
			return fmt.Errorf("adding the BackupBucket controller: %w", err)
		}
		if err := backupentry.AddToManager(ctx, mgr, p, opts); err != nil {
			return fmt.Errorf("adding the BackupEntry controller: %w", err)
		}
		if err := etcdendpoint.AddToManager(mgr, p.Type()); err != nil {
			return fmt.Errorf("adding the retirement of the Etcd endpoint webhook: %w", err)
		}
		periodics = append(periodics, backupbucket.ProbeController(cfg.Probe), entryinventory.InventoryController(cfg.Inventory), entrycopy.Controller(cfg.EntryCopy))
	}
	// Not added at all in a core process: switched off (interval 0), the drill controller
	// removes what drills published, and the drill process publishes it.
	if cfg.Controllers.drill() {
		restorer, err := drill.SelfRestorer()
		if err != nil {
			return err
		}
		periodics = append(periodics, restoredrill.DrillController(cfg.RestoreDrill, restorer.Restore))
	}
	for _, c := range periodics {
		if err := periodic.Add(mgr, p, opts, c); err != nil {
			return fmt.Errorf("adding the %s controller: %w", c.Name, err)
		}
	}
	return nil
}

// NewRehearser is the rehearsal of p's objects in mgr's cluster: its ConfigMap is
// gardener-extension-backup-<provider>-rehearsal (the chart's name of a rehearsal's release) in
// the leader election's namespace (the chart's release namespace). With cfg.Garden, its condition
// is copied to the ControllerInstallation that namespace names (rehearsal.NewGarden). With
// cfg.RehearsalRestoreDrills it drills with cfg.RestoreDrill's options.
func NewRehearser(mgr manager.Manager, p provider.Provider, cfg Config) (*rehearsal.Rehearser, error) {
	log := mgr.GetLogger().WithName("rehearsal")
	garden, off := rehearsal.NewGarden(cfg.Garden.Kubeconfig, cfg.Garden.Seed, cfg.Manager.LeaderElectionNamespace)
	if garden == nil {
		log.Info("The rehearsal's report stays on the seed: nothing is written to the garden", "reason", off)
	}
	var drills *restoredrill.Driller
	if cfg.RehearsalRestoreDrills {
		restorer, err := drill.SelfRestorer()
		if err != nil {
			return nil, err
		}
		drills = &restoredrill.Driller{Reader: mgr.GetAPIReader(), Options: cfg.RestoreDrill, SourceFor: restoredrill.StoreSource(mgr.GetAPIReader(), p),
			Restore: restorer.Restore, Slots: restoredrill.NewSlots(cfg.RestoreDrill)}
	}
	return &rehearsal.Rehearser{
		Provider: p,
		Garden:   garden,
		Reader:   mgr.GetAPIReader(),
		Client:   mgr.GetClient(),
		Log:      log,
		Options: rehearsal.Options{
			Interval:  cmp.Or(cfg.RehearsalInterval, rehearsal.DefaultInterval),
			Namespace: cfg.Manager.LeaderElectionNamespace,
			Name:      "gardener-extension-backup-" + p.Type() + "-rehearsal",
			Classes:   cfg.ExtensionClasses,
			Inventory: cfg.Inventory,
			Drills:    drills,
		},
	}, nil
}

// Run runs the controllers until ctx ends.
func Run(ctx context.Context, p provider.Provider, cfg Config) error {
	mgr, err := NewManager(cfg)
	if err != nil {
		return err
	}
	if err := AddControllers(ctx, mgr, p, cfg); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
