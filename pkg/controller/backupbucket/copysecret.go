// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// copySecretWatch asks for a reconcile of a BackupBucket (the operation annotation, as gardenlet
// and the credentials scheduler set it) when the credentials secret of its copy
// (garden/ref-<copy.credentialsRef>) appeared, changed or went since the bucket's reconcile last
// read it (ProviderStatus.CopySecretVersion): gardenlet reconciles a bucket only when its spec
// changes, so without it a copy whose secret came after the reconcile would stay
// CopyCredentialsMissing until an operator's step. The reconcile converges the copy bucket with
// the secret now there, and its new last operation wakes the probe (CopyBucketAvailable).
type copySecretWatch struct {
	provider provider.Provider
	client   client.Client
	reader   client.Reader
}

// addCopySecretWatch registers the watch for p's buckets. The secrets' metadata only, and only
// of the garden namespace, are cached (a cache of its own: the manager's reads secrets uncached).
func addCopySecretWatch(mgr manager.Manager, p provider.Provider, opts options.AddOptions) error {
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{copystore.CredentialsNamespace: {}}, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return fmt.Errorf("creating the cache of the copies' credentials secrets: %w", err)
	}
	if err := mgr.Add(secrets); err != nil {
		return err
	}
	w := &copySecretWatch{provider: p, client: mgr.GetClient(), reader: mgr.GetAPIReader()}
	refSecrets := predicate.NewTypedPredicateFuncs(func(s *metav1.PartialObjectMetadata) bool {
		return strings.HasPrefix(s.Name, copystore.CredentialsPrefix)
	})
	return builder.ControllerManagedBy(mgr).
		Named("backupbucket-copysecret-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		// A finished reconcile (its last operation) is looked at too: a secret that changed while
		// it ran was read before or after, and its record says which.
		For(&extensionsv1alpha1.BackupBucket{}, builder.WithPredicates(predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...), predicates.SpecOrOperationChanged())).
		WatchesRawSource(source.Kind(secrets, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}},
			handler.TypedEnqueueRequestsFromMapFunc(w.bucketsOf), refSecrets)).
		Complete(w)
}

// bucketsOf maps a copy's credentials secret to the buckets of the provider's type whose `copy:`
// names it (listed from the cache).
func (w *copySecretWatch) bucketsOf(ctx context.Context, s *metav1.PartialObjectMetadata) []reconcile.Request {
	list := &extensionsv1alpha1.BackupBucketList{}
	if err := w.client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "Listing the BackupBuckets whose copy a secret may serve", "secret", s.Name)
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		bb := &list.Items[i]
		if bb.Spec.Type != w.provider.Type() {
			continue
		}
		if place := w.declaredCopy(bb); place != nil && place.Secret.Namespace == s.Namespace && place.Secret.Name == s.Name {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: bb.Name}})
		}
	}
	return out
}

// declaredCopy is the copy bb's configuration declares and the extension converges (nil: none,
// refused, or the configuration does not decode or is awaited: the reconcile reports those).
func (w *copySecretWatch) declaredCopy(bb *extensionsv1alpha1.BackupBucket) *connect.CopyPlace {
	cfg, err := connect.BucketConfig(w.provider, bb)
	if err != nil {
		return nil
	}
	place, err := connect.CopyPlaceOf(w.provider, cfg, bb.Name)
	if err != nil || place == nil || notThePrimary(place, bb) != nil {
		return nil
	}
	return place
}

// Reconcile implements reconcile.Reconciler.
func (w *copySecretWatch) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if found, err := reconciled.GetOrForget(ctx, w.client, req, bb, nil); !found {
		return reconcile.Result{}, err
	}
	place := w.declaredCopy(bb)
	if place == nil {
		return reconcile.Result{}, nil
	}
	current, err := secretVersion(ctx, w.reader, place.Secret)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the copy's credentials secret %s/%s: %w", place.Secret.Namespace, place.Secret.Name, err)
	}
	ps, _ := ReadProviderStatus(bb) // unreadable: as never recorded
	if !copySecretDue(copySecretState{
		Deleting:      bb.DeletionTimestamp != nil,
		Annotated:     bb.Annotations[v1beta1constants.GardenerOperation] != "",
		LastOperation: lastOperationState(bb),
		Recorded:      ps.CopySecretVersion,
		Current:       current,
	}) {
		return reconcile.Result{}, nil
	}
	log.FromContext(ctx).Info("The copy's credentials secret changed since the bucket's reconcile read it: requesting a reconcile", "secret", place.Secret.Name)
	if err := reconciled.RequestReconcile(ctx, w.client, bb); err != nil {
		return reconcile.Result{}, fmt.Errorf("requesting a reconcile of BackupBucket %s for its copy's credentials: %w", bb.Name, err)
	}
	return reconcile.Result{}, nil
}

func lastOperationState(bb *extensionsv1alpha1.BackupBucket) gardencorev1beta1.LastOperationState {
	if bb.Status.LastOperation == nil {
		return ""
	}
	return bb.Status.LastOperation.State
}

// copySecretState is what copySecretDue decides on, for a bucket whose copy is declared.
type copySecretState struct {
	Deleting, Annotated bool
	LastOperation       gardencorev1beta1.LastOperationState
	// Recorded is ProviderStatus.CopySecretVersion (nil: never recorded); Current the secret's
	// resourceVersion now ("" missing).
	Recorded *string
	Current  string
}

// copySecretDue says whether a reconcile is to be requested for the copy's credentials: only
// for a live bucket whose last reconcile succeeded (the library retries a failed one with
// back-off, a running one records what it reads and is looked at when it ends) and that has no
// operation requested yet, when the secret is not the one the last reconcile read. A bucket
// never recorded (reconciled before the record existed) is asked once if the secret is there.
func copySecretDue(s copySecretState) bool {
	switch {
	case s.Deleting, s.Annotated, s.LastOperation != gardencorev1beta1.LastOperationStateSucceeded:
		return false
	case s.Recorded == nil:
		return s.Current != ""
	}
	return *s.Recorded != s.Current
}
