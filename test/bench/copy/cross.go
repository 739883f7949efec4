// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// newAzure is Azurite's data plane as the azure provider builds it from an account-key secret
// (the copy of another type the controllers write with), with the containers made by the azure
// management plane.
func newAzure(ctx context.Context, a *azurestack.Azurite, containers ...string) (replication.Destination, error) {
	p := provider.Register(&azureprovider.Provider{})
	creds := provider.Credentials{Data: a.SecretData(), Region: "westeurope"}
	cfg, err := p.Decode(nil)
	if err != nil {
		return nil, err
	}
	mgmt, err := cfg.NewManagement(ctx, creds)
	if err != nil {
		return nil, err
	}
	for _, c := range containers {
		if err := mgmt.EnsureBucket(ctx, objectstore.Bucket{Name: c, Region: creds.Region}); err != nil {
			return nil, fmt.Errorf("creating container %s in Azurite: %w", c, err)
		}
	}
	d, err := p.NewDataPlane(ctx, creds)
	if err != nil {
		return nil, err
	}
	dst, ok := d.(replication.Destination)
	if !ok {
		return nil, fmt.Errorf("the azure data plane writes no streams")
	}
	return dst, nil
}
