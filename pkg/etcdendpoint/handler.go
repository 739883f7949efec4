// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package etcdendpoint is the seed's mutating webhook on etcd-druid's Etcd resources: for an Etcd
// whose backups go to a BackupBucket of this extension, it sets spec.backup.store.endpointOverride
// (which etcd-druid passes to etcd-backup-restore as --store-endpoint-override) to the endpoint
// the shoot's etcd-backup secret names, so that the sidecar reaches the same store by the flag as
// by the secret's deprecated key (docs/etcd-backup-secret.md, "The endpoint").
package etcdendpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1helper "github.com/gardener/gardener/pkg/api/extensions/v1alpha1/helper"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// FieldPath is the field the webhook sets.
const FieldPath = "spec.backup.store.endpointOverride"

// patchPath is FieldPath as a JSON pointer.
const patchPath = "/spec/backup/store/endpointOverride"

// Handler decides an Etcd's endpointOverride. Its fields are fixed at start; it keeps nothing
// per request (the webhook server calls it concurrently).
type Handler struct {
	// Provider is this binary's provider: its type selects the BackupBuckets that are ours, its
	// Decode and Config.EtcdStoreEndpoint say the endpoint.
	Provider provider.Provider
	// Reader reads BackupBuckets (the manager's cache does) and Secrets (which the manager's
	// client reads from the API server).
	Reader client.Reader
	// ExtensionClasses are the classes of the BackupBuckets this extension serves (empty: shoot).
	ExtensionClasses []extensionsv1alpha1.ExtensionClass
	Log              logr.Logger
}

var _ admission.Handler = Handler{}

// Handle implements admission.Handler. It allows every request: unchanged where the Etcd's
// backup is not ours or its secret says no endpoint, patched where it does. It denies only what
// leaves the endpoint unknown for a bucket of ours (a providerConfig or secret key that does not
// decode), and answers an error when the API server could not be read; under the webhook's
// failurePolicy Fail either keeps the Etcd (and etcd's pods) as they are until the next attempt.
func (h Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	etcd := &druidcorev1alpha1.Etcd{}
	if err := json.Unmarshal(req.Object.Raw, etcd); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the Etcd: %w", err))
	}
	if etcd.Namespace == "" {
		etcd.Namespace = req.Namespace
	}
	d, err := h.Decide(ctx, etcd)
	var invalid *InvalidError
	switch {
	case errors.As(err, &invalid):
		return admission.Denied(err.Error())
	case err != nil:
		return admission.Errored(http.StatusInternalServerError, err)
	}
	log := h.Log.WithValues("etcd", client.ObjectKeyFromObject(etcd), "backupBucket", d.Bucket)
	if d.Endpoint == "" || d.Endpoint == d.Current {
		if d.Reason != "" {
			log.V(1).Info("Endpoint override left as it is", "reason", d.Reason)
		}
		return admission.Allowed("").WithWarnings(d.Warnings...)
	}
	warnings := d.Warnings
	if d.Current != "" {
		// The values are not shown: they reach warnings and logs, which are read more widely
		// than the Etcd.
		w := fmt.Sprintf("%s: a different value was replaced by the endpoint of BackupBucket %s (its etcd-backup secret %s), which this extension owns", FieldPath, d.Bucket, d.Secret)
		warnings = append(warnings, w)
		log.Info("Endpoint override replaced", "secret", d.Secret)
	} else {
		log.V(1).Info("Endpoint override set", "secret", d.Secret)
	}
	resp := admission.Patched("", jsonpatch.JsonPatchOperation{Operation: "add", Path: patchPath, Value: d.Endpoint})
	return resp.WithWarnings(warnings...)
}

// Decision is what the webhook does with one Etcd.
type Decision struct {
	// Endpoint is the endpoint to set; "" leaves the field as it is.
	Endpoint string
	// Current is the field's value in the request.
	Current string
	// Bucket and Secret name where the endpoint comes from (empty where the backup is not ours).
	Bucket, Secret string
	// Reason says why nothing is set, for the log.
	Reason string
	// Warnings go back to the client that wrote the Etcd.
	Warnings []string
}

// InvalidError is a bucket of this extension whose providerConfig or etcd-backup secret does not
// say a usable endpoint. Its message names the object and the field or key, never a value.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Decide says what the webhook does with etcd, reading its BackupBucket and its backup secret.
// It leaves alone (an empty Endpoint, no error) an Etcd without a backup store, one whose
// container is not a BackupBucket of this provider's type and classes on this seed, one without
// a secretRef, and one whose secret says no endpoint (whatever the field holds then is someone
// else's, and stays). A missing secret is left alone with a warning: gardener deploys the Etcd
// after its etcd-backup, so that is a deletion in progress or a store set up by hand.
func (h Handler) Decide(ctx context.Context, etcd *druidcorev1alpha1.Etcd) (Decision, error) {
	store := etcd.Spec.Backup.Store
	if store == nil || store.Container == nil || *store.Container == "" {
		return Decision{Reason: "no backup store"}, nil
	}
	d := Decision{Current: deref(store.EndpointOverride)}
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Name: *store.Container}, bb); err != nil {
		if apierrors.IsNotFound(err) {
			d.Reason = "the container is no BackupBucket of this seed"
			return d, nil
		}
		return d, fmt.Errorf("reading BackupBucket %s: %w", *store.Container, err)
	}
	if bb.Spec.Type != h.Provider.Type() || !h.serves(bb) {
		d.Reason = fmt.Sprintf("BackupBucket of type %q and class %q is not this extension's", bb.Spec.Type, extensionsv1alpha1helper.GetExtensionClassOrDefault(bb.Spec.Class))
		return d, nil
	}
	d.Bucket = bb.Name
	if store.SecretRef == nil || store.SecretRef.Name == "" {
		d.Reason = "no secretRef"
		return d, nil
	}
	ns := store.SecretRef.Namespace
	if ns == "" {
		ns = etcd.Namespace
	}
	key := client.ObjectKey{Namespace: ns, Name: store.SecretRef.Name}
	d.Secret = key.String()
	secret := &corev1.Secret{}
	if err := h.Reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			d.Reason = "the backup secret does not exist"
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: not set: the backup secret %s does not exist", FieldPath, d.Secret))
			return d, nil
		}
		return d, fmt.Errorf("reading the backup secret %s: %w", d.Secret, err)
	}
	var raw []byte
	if bb.Spec.ProviderConfig != nil {
		raw = bb.Spec.ProviderConfig.Raw
	}
	cfg, err := h.Provider.Decode(raw)
	if err != nil {
		return d, &InvalidError{fmt.Errorf("%s: the endpoint of BackupBucket %s is not known: %w", FieldPath, bb.Name, decode.Under(err, "spec"))}
	}
	endpoint, err := cfg.EtcdStoreEndpoint(secret.Data)
	if err != nil {
		return d, &InvalidError{fmt.Errorf("%s: the endpoint in the backup secret %s is not usable: %w", FieldPath, d.Secret, err)}
	}
	if endpoint == "" {
		d.Reason = "the backup secret names no endpoint"
	}
	d.Endpoint = endpoint
	return d, nil
}

// serves is the class filter of the controllers (predicate.HasClass): no classes means shoot.
func (h Handler) serves(bb *extensionsv1alpha1.BackupBucket) bool {
	class := extensionsv1alpha1helper.GetExtensionClassOrDefault(bb.Spec.Class)
	if len(h.ExtensionClasses) == 0 || slices.Equal(h.ExtensionClasses, []extensionsv1alpha1.ExtensionClass{""}) {
		return class == extensionsv1alpha1.ExtensionClassShoot
	}
	return slices.Contains(h.ExtensionClasses, class)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
