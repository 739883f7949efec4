// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission

import (
	"sort"

	extensionswebhook "github.com/gardener/gardener/extensions/pkg/webhook"
	extensionscmdwebhook "github.com/gardener/gardener/extensions/pkg/webhook/cmd"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

// Name names the admission's ValidatingWebhookConfiguration, its Service (service mode) and the
// secrets of its certificates (gardener's webhook library keeps a name that starts with
// "gardener-" as it is).
const Name = "gardener-extension-backup-admission"

// ProviderLabel is the label gardener-apiserver's ExtensionLabels admission plugin sets to "true"
// on a BackupBucket for its spec.provider.type and on a Seed for its spec.provider.type and its
// spec.backup.provider; the plugin removes and recomputes these labels on every create and update,
// before validating webhooks are called, so a selector on them is truthful.
func ProviderLabel(typ string) string { return v1beta1constants.LabelExtensionProviderTypePrefix + typ }

// ExtensionLabel is the label the same plugin sets to "true" on a Seed for every entry of its
// spec.extensions that is not disabled: here this extension's seed configuration of typ
// (decode.ExtensionType).
func ExtensionLabel(typ string) string {
	return v1beta1constants.LabelExtensionExtensionTypePrefix + decode.ExtensionType(typ)
}

// Switches returns the admission's webhooks, two for each provider type of v.APIs, by name:
// "provider-<type>" for Seeds and BackupBuckets labelled ProviderLabel(type), and
// "seed-extension-<type>" for Seeds labelled ExtensionLabel(type). Every other Seed and
// BackupBucket is never sent to the admission. Each webhook runs the whole of v (a Seed matched by
// two is validated twice, with the same verdict). failurePolicy is read when the webhooks are
// built, after the flags are parsed.
func Switches(v Validator, failurePolicy *admissionregistrationv1.FailurePolicyType) []extensionscmdwebhook.NameToFactory {
	types := make([]string, 0, len(v.APIs))
	for typ := range v.APIs {
		types = append(types, typ)
	}
	sort.Strings(types)
	var out []extensionscmdwebhook.NameToFactory
	for _, typ := range types {
		out = append(out,
			extensionscmdwebhook.Switch("provider-"+typ, factory(v, "provider-"+typ, ProviderLabel(typ), failurePolicy,
				&gardencorev1beta1.BackupBucket{}, &gardencorev1beta1.Seed{})),
			extensionscmdwebhook.Switch("seed-extension-"+typ, factory(v, "seed-extension-"+typ, ExtensionLabel(typ), failurePolicy,
				&gardencorev1beta1.Seed{})),
		)
	}
	return out
}

// factory builds the webhook name: v on objs, for objects labelled label "true", at its own path
// (the server refuses one path twice).
func factory(v Validator, name, label string, failurePolicy *admissionregistrationv1.FailurePolicyType, objs ...client.Object) func(manager.Manager) (*extensionswebhook.Webhook, error) {
	return func(manager.Manager) (*extensionswebhook.Webhook, error) {
		types := make([]extensionswebhook.Type, 0, len(objs))
		for _, o := range objs {
			types = append(types, extensionswebhook.Type{Obj: o})
		}
		return &extensionswebhook.Webhook{
			Name:           name,
			Action:         extensionswebhook.ActionValidating,
			Path:           Path + "/" + name,
			Target:         extensionswebhook.TargetSeed,
			Types:          types,
			Webhook:        &admission.Webhook{Handler: v, RecoverPanic: new(true)},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "true"}},
			FailurePolicy:  new(*failurePolicy),
		}, nil
	}
}
