// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package stores is the list of the providers every binary writes a copy of another type with
// (copy.type, provider.Seeded.SetCopyStores): the cloud stores, each with its defaults. It links
// every cloud SDK into the binary that imports it (the thin mains do).
package stores

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// Copies returns a provider of each cloud store type, with its defaults and no flags bound: azure
// chooses its cloud by the copy's region (no --azure-cloud-config). local is not among them: its
// directory is the local binary's --local-root, so only the local binary writes a local copy.
func Copies() []provider.Provider {
	return []provider.Provider{
		provider.Register(&aws.Provider{}),
		provider.Register(&azure.Provider{}),
		provider.Register(&gcp.Provider{}),
		provider.Register(&openstack.Provider{}),
	}
}
