package controller

import (
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Observer is what the controllers that only read the store (the bucket probe, the entry
// inventory) share. It holds nothing of one request.
type Observer struct {
	Provider provider.Provider
	// Reader reads secrets from the API server (the manager's API reader), never from a cache.
	Reader   client.Reader
	Client   client.Client
	Recorder events.EventRecorder
	Options  ObserveOptions
}

// NewObserver returns the Observer of p on mgr.
func NewObserver(mgr manager.Manager, p provider.Provider, recorder events.EventRecorder, opts ObserveOptions) Observer {
	return Observer{Provider: p, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Recorder: recorder, Options: opts}
}

// AddObserver registers r as the controller name-<type> for p's objects of obj's kind: two
// workers, woken by creation (so at the start, once for every object), spec changes, deletion
// and a changed last operation, never by their own status writes (SpecOrOperationChanged); r
// requeues itself for its interval. An observer switched off (interval 0) is registered all the
// same: its r then removes what it published on each object, and requeues nothing.
func AddObserver(mgr manager.Manager, name string, obj client.Object, p provider.Provider, opts AddOptions, r reconcile.Reconciler) error {
	return builder.ControllerManagedBy(mgr).
		Named(name+"-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(obj, builder.WithPredicates(
			predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...), SpecOrOperationChanged())).
		Complete(r)
}
