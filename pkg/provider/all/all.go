// Package all lists the four providers, for the programs that serve them all (the admission
// webhook) and the tests that check them all.
package all

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// Providers returns the four providers with their defaults, by extension type.
func Providers() map[string]provider.Provider {
	out := map[string]provider.Provider{}
	for _, p := range []provider.Provider{&aws.Provider{}, &azure.Provider{}, &gcp.Provider{}, &openstack.Provider{}} {
		out[p.Type()] = p
	}
	return out
}
