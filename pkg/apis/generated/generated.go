// Package generated is the providerConfig part every provider with generated credentials
// shares, and how the BackupBucket controller reads it from a provider's decoded config.
package generated

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/rotation"
)

// Credentials is inlined in a provider's `generatedCredentials:`.
type Credentials struct {
	// Rotation says when to rotate the credential and how long the previous one stays valid.
	Rotation *rotation.Config `json:"rotation,omitempty"`
	// AllowPassThrough publishes nothing and leaves shoots on the operator's credentials when the
	// store cannot issue restricted ones; the bucket's status says so. Without it, that is an
	// error.
	AllowPassThrough bool `json:"allowPassThrough,omitempty"`
}

// Validate checks the settings at path (the `generatedCredentials` field).
func (c *Credentials) Validate(path *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	return c.Rotation.Validate(path.Child("rotation"))
}

// Policy is implemented by a provider's decoded BackupBucket config.
type Policy interface {
	// GenerationSettings returns the settings of the bucket's generated credentials with the
	// provider's defaults applied, or nil if the config does not ask for any.
	GenerationSettings() *Credentials
}

// Of returns cfg's settings, or nil for a config that does not ask for generated credentials.
func Of(cfg any) *Credentials {
	if p, ok := cfg.(Policy); ok {
		return p.GenerationSettings()
	}
	return nil
}
