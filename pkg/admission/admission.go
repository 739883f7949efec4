// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package admission validates, in the garden cluster, the backup providerConfig of core
// BackupBuckets and of Seeds (spec.backup), and this extension's seed configuration in a Seed's
// spec.extensions (type backup-<provider>), with the same decoding and validation the controllers
// use, and refuses changes that would weaken a bucket's immutability.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

// Path is the prefix of the webhooks' paths (Switches: Path/<webhook name>).
const Path = "/validate-backup-provider-config"

// Validator validates the providerConfigs of the providers it knows; other types are allowed
// (they belong to other extensions). It holds no per-request state.
type Validator struct {
	// APIs are the providers' SDK-free halves by extension type (all.APIs()).
	APIs map[string]config.API
}

var _ admission.Handler = Validator{}

// backup is what the webhook checks of a core BackupBucket or Seed.
type backup struct {
	typ    string
	config []byte
	// path is the providerConfig's field path.
	path string
	// seedConfig is the providerConfig of a Seed's spec.extensions entry of type
	// decode.ExtensionType(typ): this extension's settings beside the providerConfig, merged into
	// it by the controllers; seedConfigAt is its field path.
	seedConfig   []byte
	seedConfigAt string
	// seedConfigs are the providerConfigs of a Seed's other spec.extensions entries of this
	// extension (type backup-<provider>, not of the seed's backup provider), by field path, with
	// their provider type: each is checked on its own.
	seedConfigs []seedConfig
	// resources are the Secrets a Seed's spec.resources lists (nil for a BackupBucket): a copy's
	// credentialsRef must name one of them.
	resources map[string]bool
	// bucket is the bucket's name where the object names it (a BackupBucket's name is its
	// bucket's; a Seed's bucket is named after its UID, which is not known before it exists).
	bucket string
}

// backupOf returns the backup of a core BackupBucket or Seed; ok is false for a Seed without
// backup.
func backupOf(kind string, raw []byte) (b backup, ok bool, err error) {
	switch kind {
	case "BackupBucket":
		bb := &gardencorev1beta1.BackupBucket{}
		if err := json.Unmarshal(raw, bb); err != nil {
			return backup{}, false, err
		}
		return backup{typ: bb.Spec.Provider.Type, config: rawOf(bb.Spec.ProviderConfig), path: "spec.providerConfig", bucket: bb.Name}, true, nil
	case "Seed":
		seed := &gardencorev1beta1.Seed{}
		if err := json.Unmarshal(raw, seed); err != nil {
			return backup{}, false, err
		}
		b := backup{path: "spec.backup.providerConfig", resources: map[string]bool{}}
		for _, r := range seed.Spec.Resources {
			if r.ResourceRef.Kind == "Secret" && r.ResourceRef.APIVersion == "v1" {
				b.resources[r.ResourceRef.Name] = true
			}
		}
		if seed.Spec.Backup != nil {
			b.typ, b.config = seed.Spec.Backup.Provider, rawOf(seed.Spec.Backup.ProviderConfig)
		}
		for i, ext := range seed.Spec.Extensions {
			typ, ours := strings.CutPrefix(ext.Type, "backup-")
			if !ours || ptr.Deref(ext.Disabled, false) {
				continue
			}
			sc := seedConfig{typ: typ, raw: rawOf(ext.ProviderConfig), at: fmt.Sprintf("spec.extensions[%d].providerConfig", i)}
			if typ == b.typ && b.seedConfigAt == "" {
				b.seedConfig, b.seedConfigAt = sc.raw, sc.at
				continue
			}
			b.seedConfigs = append(b.seedConfigs, sc)
		}
		return b, seed.Spec.Backup != nil || len(b.seedConfigs) > 0, nil
	}
	return backup{}, false, nil
}

// seedConfig is the providerConfig of a Seed's spec.extensions entry of this extension.
type seedConfig struct {
	typ, at string
	raw     []byte
}

func rawOf(ext *runtime.RawExtension) []byte {
	if ext == nil {
		return nil
	}
	return ext.Raw
}

// Handle implements admission.Handler.
func (v Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	b, ok, err := backupOf(req.Kind.Kind, req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	// Each of this extension's entries in a Seed's spec.extensions as its controller applies it
	// (provider.Seeded.Apply): on its own, its problems named at its field path.
	for _, sc := range b.seedConfigs {
		if p, known := v.APIs[sc.typ]; known {
			if _, err := decode.WithSeedConfig(p.DecodeBucketConfig, nil, sc.raw, sc.at, sc.typ, p.IncumbentFields()); err != nil {
				return admission.Denied(err.Error())
			}
			if msg := copyCredentialsListed(sc.raw, sc.at, b.resources); msg != "" {
				return admission.Denied(msg)
			}
		}
	}
	p, known := v.APIs[b.typ]
	if !ok || !known {
		return admission.Allowed("")
	}
	if b.bucket != "" && req.Operation == admissionv1.Create {
		if err := p.ValidateBucketName(b.bucket); err != nil {
			return admission.Denied("metadata.name: " + err.Error())
		}
	}
	// As the controllers decode it: merged with the seed configuration (provider.Seeded); the
	// landscape's defaults (the ControllerDeployment's values) are not known here, and the
	// Extension's status reports a problem only they make.
	if _, err := decode.WithSeedConfig(p.DecodeBucketConfig, b.config, b.seedConfig, b.seedConfigAt, b.typ, p.IncumbentFields()); err != nil {
		// The provider's errors name the field from "providerConfig" on.
		return admission.Denied(decode.Under(err, strings.TrimSuffix(b.path, ".providerConfig")).Error())
	}
	if msg := copyCredentialsListed(b.seedConfig, b.seedConfigAt, b.resources); msg != "" {
		return admission.Denied(msg)
	}
	if req.Operation == admissionv1.Update {
		old, oldOK, err := backupOf(req.Kind.Kind, req.OldObject.Raw)
		if err == nil && oldOK && old.typ == b.typ {
			if msg := weakened(immutabilityOf(old.config), immutabilityOf(b.config), b.path+".immutability"); msg != "" {
				return admission.Denied(msg)
			}
		}
	}
	return admission.Allowed("")
}

// immutability is what the four providers' configs share about immutability: a retention period
// that is locked (GCS and Azure `locked`, S3 Object Lock `mode: compliance`) or not.
type immutability struct {
	set    bool
	period time.Duration
	locked bool
}

func immutabilityOf(raw []byte) immutability {
	var cfg struct {
		Immutability *struct {
			RetentionPeriod metav1.Duration `json:"retentionPeriod"`
			Locked          bool            `json:"locked"`
			Mode            string          `json:"mode"`
		} `json:"immutability"`
	}
	// Objects in admission requests are JSON, their providerConfig too.
	if len(raw) == 0 || json.Unmarshal(raw, &cfg) != nil || cfg.Immutability == nil {
		return immutability{}
	}
	im := cfg.Immutability
	return immutability{set: true, period: im.RetentionPeriod.Duration, locked: im.Locked || strings.EqualFold(im.Mode, "compliance")}
}

// weakened explains why the change from old to new weakens a locked immutability ("" if it does
// not): a locked policy can never be removed, unlocked or shortened.
func weakened(old, updated immutability, path string) string {
	switch {
	case !old.set || !old.locked:
		return ""
	case !updated.set:
		return fmt.Sprintf("%s: Forbidden: a locked immutability policy of %s can never be removed", path, old.period)
	case !updated.locked:
		return fmt.Sprintf("%s: Forbidden: a locked immutability policy can never be unlocked (locked: true, or mode: compliance)", path)
	case updated.period < old.period:
		return fmt.Sprintf("%s.retentionPeriod: Forbidden: a locked immutability policy can only be extended, not shortened from %s to %s", path, old.period, updated.period)
	}
	return ""
}

// copyCredentialsListed explains why a seed configuration's copy.credentialsRef is refused ("" if
// it is not): on a Seed (resources not nil) it must name a Secret of the Seed's spec.resources,
// which gardenlet alone copies into the seed. The configuration has been decoded before.
func copyCredentialsListed(seedConfig []byte, at string, resources map[string]bool) string {
	if resources == nil || len(seedConfig) == 0 {
		return ""
	}
	var cfg struct {
		Copy *struct {
			CredentialsRef string `json:"credentialsRef"`
		} `json:"copy"`
	}
	if json.Unmarshal(seedConfig, &cfg) != nil || cfg.Copy == nil || resources[cfg.Copy.CredentialsRef] {
		return ""
	}
	return fmt.Sprintf("%s.copy.credentialsRef: Invalid value: %q: the Seed's spec.resources must list this Secret (kind Secret, apiVersion v1, resourceRef.name %q): gardenlet copies only those into the seed, as ref-<name>",
		at, cfg.Copy.CredentialsRef, cfg.Copy.CredentialsRef)
}
