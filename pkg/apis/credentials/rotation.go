// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package credentials

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationRotate on a BackupBucket requests a rotation of its generated credential, and on a
// BackupEntry a rotation of the entry's own credential (entryCredentials): each new value (any
// token, for example a date) is honoured once.
const AnnotationRotate = "backup.extensions.gardener.cloud/rotate-credentials"

// DefaultGracePeriod keeps a rotated-out credential valid for a week.
const DefaultGracePeriod = 7 * 24 * time.Hour

// Rotation is `rotation:` in a providerConfig: when to rotate a generated credential and how long
// a rotated-out one stays valid.
type Rotation struct {
	// Period rotates the credential when it is this old (unset: only on request).
	Period *metav1.Duration `json:"period,omitempty"`
	// GracePeriod keeps the previous credential valid this long after a rotation, so that
	// entries and running backups move to the new one first (default 168h; 0s: revoke at once).
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`
}

// RotationPeriod is the configured period (0: only on request). Nil-safe.
func (c *Rotation) RotationPeriod() time.Duration {
	if c != nil && c.Period != nil {
		return c.Period.Duration
	}
	return 0
}

// Grace is the configured grace period or the default. Nil-safe.
func (c *Rotation) Grace() time.Duration {
	if c != nil && c.GracePeriod != nil {
		return c.GracePeriod.Duration
	}
	return DefaultGracePeriod
}

// Validate checks the config at path. The grace period must be shorter than the period: a store
// may hold only two credentials (Azure's account keys, IAM's access keys), and the previous one
// must be revoked before the next rotation.
func (c *Rotation) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c == nil {
		return nil
	}
	if c.Period != nil && c.Period.Duration < time.Hour {
		errs = append(errs, field.Invalid(path.Child("period"), c.Period.Duration.String(), "must be at least 1h"))
	}
	if c.GracePeriod != nil && c.GracePeriod.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("gracePeriod"), c.GracePeriod.Duration.String(), "must not be negative"))
	}
	switch {
	case c.Period == nil:
	case c.GracePeriod != nil && c.GracePeriod.Duration >= c.Period.Duration:
		errs = append(errs, field.Invalid(path.Child("gracePeriod"), c.GracePeriod.Duration.String(), "must be shorter than the period: the previous credential must be revoked before the next rotation"))
	case c.GracePeriod == nil && DefaultGracePeriod >= c.Period.Duration:
		errs = append(errs, field.Required(path.Child("gracePeriod"), fmt.Sprintf("the default %s is not shorter than the period %s: set a shorter one (the previous credential must be revoked before the next rotation)", DefaultGracePeriod, c.Period.Duration)))
	}
	return errs
}
