// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Cloud is a provider as the binaries register it (provider.Register), with the Writer its tests
// write fixtures with: what a test needs of a provider without knowing its config type, so that
// one list of stand-ins (test/standin) can hold every provider.
type Cloud struct {
	provider.Provider

	NewWriter func(context.Context, provider.Credentials) (objectstore.Writer, error)
}

// Registered registers c as the binaries do.
func Registered[C config.ProviderConfig](c provider.TestCloud[C]) Cloud {
	return Cloud{Provider: provider.Register(c), NewWriter: c.NewWriter}
}

// Stores builds the data plane, the management plane (with the provider's default
// providerConfig) and the Writer of creds.
func (c Cloud) Stores(ctx context.Context, creds provider.Credentials) (conformance.Stores, error) {
	var s conformance.Stores
	cfg, err := c.Decode(nil)
	if err != nil {
		return s, err
	}
	if s.DataPlane, err = c.NewDataPlane(ctx, creds); err != nil {
		return s, err
	}
	if s.Management, err = cfg.NewManagement(ctx, creds); err != nil {
		return s, err
	}
	s.Writer, err = c.NewWriter(ctx, creds)
	return s, err
}
