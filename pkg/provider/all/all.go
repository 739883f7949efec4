// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package all is the one list of the extension's providers, by their SDK-free APIs: the
// admission webhook validates with them without linking any cloud SDK, and the Makefile
// (hack/providers), the chart's examples and the demo take the list of types from here. A test
// checks that every listed type has its provider package, serving exactly that API.
package all

import (
	"slices"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
)

// APIs returns every provider's API by extension type.
func APIs() map[string]config.API {
	out := map[string]config.API{}
	for _, api := range []config.API{aws.API, azure.API, gcp.API, local.API, openstack.API} {
		out[api.Type()] = api
	}
	return out
}

// Types returns the extension types, sorted.
func Types() []string {
	types := make([]string, 0, len(APIs()))
	for t := range APIs() {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}
