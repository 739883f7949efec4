package controller

import (
	"context"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/utils/clock"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// AddOptions configure either controller.
type AddOptions struct {
	Controller                ctrlcontroller.Options
	IgnoreOperationAnnotation bool
	ExtensionClasses          []extensionsv1alpha1.ExtensionClass
	Deletion                  DeletionOptions
	Observe                   ObserveOptions
}

// ObserveOptions configure the bucket probe and the entry inventory.
type ObserveOptions struct {
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
func (o ObserveOptions) Now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

// DeletionOptions are the deletion engine's settings shared by both controllers.
type DeletionOptions struct {
	// Parallelism is the most delete requests in flight per deletion.
	Parallelism int
}

// DeleteOptions are the deletion engine's options for one reconcile bound by ctx's deadline
// (gardener's default reconcile timeout is 3 minutes): the engine stops starting requests at
// Deadline (a fifth of the time, at least 5s, before the end), abandons requests still in flight
// at Cutoff (a tenth, at least 2s, before the end) and so leaves the reconciler time to write the
// "in progress" status that makes the next reconcile resume.
func (o DeletionOptions) DeleteOptions(ctx context.Context) objectstore.DeleteOptions {
	d, ok := ctx.Deadline()
	if !ok {
		now := time.Now()
		return objectstore.DeleteOptions{Parallelism: o.Parallelism, Deadline: now.Add(2 * time.Minute), Cutoff: now.Add(150 * time.Second)}
	}
	remaining := time.Until(d)
	return objectstore.DeleteOptions{
		Parallelism: o.Parallelism,
		Deadline:    d.Add(-min(max(remaining/5, 5*time.Second), remaining/2)),
		Cutoff:      d.Add(-min(max(remaining/10, 2*time.Second), remaining/4)),
	}
}
