// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package periodic is the one skeleton of the controllers that look at each object on an
// interval and only read the store (the bucket probe, the entry inventory, the restore drill):
// their registration (Controller, Add), the flags of each (Options, an extensionscmdcontroller.Option),
// what their reconcilers share (Deps: clients, recorder, clock, start), the start of every
// reconcile and what is taken back when an object is gone, being deleted or the controller
// switched off (Reconcile, by each controller's Lifecycle), and their scheduling (FirstSlot for an
// object's first look, Jitter for the next ones).
package periodic

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	extensionscmdcontroller "github.com/gardener/gardener/extensions/pkg/controller/cmd"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Options are one periodic controller's flags, in the shape of gardener's extensionscmdcontroller options
// (an extensionscmdcontroller.Option, so that the command's option aggregator binds and completes them with
// its own).
type Options interface {
	// AddFlags binds the options to their flags, their current values the defaults.
	AddFlags(fs *pflag.FlagSet)
	// Validate reports the first value out of range, named by its flag.
	Validate() error
	// Complete is Validate, called once the flags are parsed.
	Complete() error
}

var _ extensionscmdcontroller.Option = Options(nil)

// Controller is one periodic controller, registered by Add. Its reconciler requeues itself for
// its interval; switched off (interval 0) it is registered all the same and removes, on each
// object, what it published there, which nothing would refresh any more.
type Controller struct {
	// Name is the controller's name without the provider type, e.g. "backupbucket-probe".
	Name string
	// Recorder is the name of its event recorder without the provider type, e.g. "backupbucket".
	Recorder string
	// For is the kind it looks at (a BackupBucket or a BackupEntry).
	For client.Object
	// Workers is the most reconciles at once (0: 2).
	Workers int
	// WakeAlso are changes that wake it besides creation, spec changes, deletion and a changed
	// last operation (SpecOrOperationChanged).
	WakeAlso []predicate.Predicate
	// New builds its reconciler, once, from what the periodic controllers share.
	New func(Deps) reconcile.Reconciler

	// Watches, if set, are further kinds that wake it, each mapped onto requests for c.For's
	// objects (Watch). It is called once by Add, with mgr to register what the mappings need (a
	// field index) and typeAndClass, the type and class predicates of c.For's objects, for the
	// mappings to filter with.
	Watches func(mgr manager.Manager, typeAndClass []predicate.Predicate) ([]Watch, error)
}

// Watch is a further kind that wakes a periodic controller (Controller.Watches): Handler maps
// events of Object's kind onto requests for the controller's objects.
type Watch struct {
	Object  client.Object
	Handler handler.EventHandler
}

// Deps is what the periodic controllers share. It holds nothing of one request.
type Deps struct {
	Provider provider.Provider
	// Reader reads secrets from the API server (the manager's API reader), never from a cache.
	Reader   client.Reader
	Client   client.Client
	Recorder events.EventRecorder
	// Clock is the time source (nil: the real clock); tests move it instead of sleeping.
	Clock clock.PassiveClock
	// Started is when the controller started: an object published before has no metrics
	// series behind it in this process, and one never looked at waits for its slot after it.
	Started time.Time
}

// Now is the clock's time.
func (d Deps) Now() time.Time {
	if d.Clock == nil {
		return time.Now()
	}
	return d.Clock.Now()
}

// Add registers c as the controller c.Name-<type> for p's objects of c.For's kind and of the
// extension classes in opts: woken by creation (so at the start, once for every object), spec
// changes, deletion, a changed last operation and c.WakeAlso, never by its own status writes
// (SpecOrOperationChanged), and by c.Watches.
func Add(mgr manager.Manager, p provider.Provider, opts options.AddOptions, c Controller) error {
	deps := Deps{Provider: p, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(c.Recorder + "-" + p.Type())}
	deps.Started = deps.Now()
	workers := c.Workers
	if workers <= 0 {
		workers = 2
	}
	typeAndClass := []predicate.Predicate{predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...)}
	b := builder.ControllerManagedBy(mgr).
		Named(c.Name+"-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: workers, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(c.For, builder.WithPredicates(slices.Concat(typeAndClass, []predicate.Predicate{
			predicate.Or(append([]predicate.Predicate{predicates.SpecOrOperationChanged()}, c.WakeAlso...)...)})...))
	if c.Watches != nil {
		watches, err := c.Watches(mgr, typeAndClass)
		if err != nil {
			return fmt.Errorf("the further watches of %s: %w", c.Name, err)
		}
		for _, w := range watches {
			b = b.Watches(w.Object, w.Handler)
		}
	}
	return b.Complete(c.New(deps))
}

// FirstSlot is when an object never looked at is looked at first: at its own slot in the
// interval (from a hash of its UID), the first at or after anchor (its creation, or this
// process's start if later). Objects created at once (a seed's first start, a restore of many
// shoots) or found unseen at once (the controller switched on, a new leader) are so spread
// evenly over one interval, instead of arriving as one burst of listings that the later looks'
// 0-10 % jitter would keep a burst for many cycles. The time is fixed by the anchor, not by when
// it is asked: a wake-up that comes late still finds it passed.
func FirstSlot(obj metav1.Object, interval time.Duration, anchor time.Time) time.Time {
	h := fnv.New64a()
	_, _ = h.Write([]byte(obj.GetUID()))
	_, _ = h.Write([]byte(obj.GetName())) // a client that sets no UID (tests) still spreads by name
	slot := time.Duration(h.Sum64() % uint64(interval))
	if interval >= time.Second {
		slot = slot.Truncate(time.Second) // whole seconds, like the snapshot times it is compared with
	}
	first := anchor.Truncate(interval).Add(slot)
	if first.Before(anchor) {
		first = first.Add(interval)
	}
	return first
}

// Jitter spreads periodic work: d stretched by a random 0-10%, so that a seed's resources that
// started together do not stay in step.
func Jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/10+1))
}
