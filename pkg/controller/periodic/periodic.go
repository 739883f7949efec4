// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package periodic is what the controllers that only read the store on an interval (the bucket
// probe, the entry inventory) share: their dependencies, options, registration and jitter.
package periodic

import (
	"math/rand/v2"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Deps is what the controllers that only read the store (the bucket probe, the entry
// inventory) share. It holds nothing of one request.
type Deps struct {
	Provider provider.Provider
	// Reader reads secrets from the API server (the manager's API reader), never from a cache.
	Reader   client.Reader
	Client   client.Client
	Recorder events.EventRecorder
	Options  Options
}

// NewDeps returns the Deps of p on mgr.
func NewDeps(mgr manager.Manager, p provider.Provider, recorder events.EventRecorder, opts Options) Deps {
	return Deps{Provider: p, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Recorder: recorder, Options: opts}
}

// Add registers r as the controller name-<type> for p's objects of obj's kind: two
// workers, woken by creation (so at the start, once for every object), spec changes, deletion
// and a changed last operation, never by their own status writes (SpecOrOperationChanged); r
// requeues itself for its interval. A controller switched off (interval 0) is registered all the
// same: its r then removes what it published on each object, and requeues nothing.
func Add(mgr manager.Manager, name string, obj client.Object, p provider.Provider, classes []extensionsv1alpha1.ExtensionClass, ctrlOpts ctrlcontroller.Options, r reconcile.Reconciler) error {
	return builder.ControllerManagedBy(mgr).
		Named(name+"-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: ctrlOpts.SkipNameValidation}).
		For(obj, builder.WithPredicates(
			predicateutils.HasType(p.Type()), predicateutils.HasClass(classes...), predicates.SpecOrOperationChanged())).
		Complete(r)
}

// Options configure the bucket probe and the entry inventory.
type Options struct {
	// ProbeInterval is how often each bucket is probed (0: never).
	ProbeInterval time.Duration
	// InventoryInterval is how often each entry's prefix is counted (0: never).
	InventoryInterval time.Duration
	// Thresholds are the extension's default freshness thresholds (a bucket's providerConfig
	// may override them).
	Thresholds inventory.Thresholds
	// Clock is the time source (nil: the real clock); tests move it instead of sleeping.
	Clock clock.PassiveClock
}

// Now is the clock's time.
func (o Options) Now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

// Jitter spreads periodic work: d stretched by a random 0-10%, so that a seed's resources that
// started together do not stay in step.
func Jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/10+1))
}
