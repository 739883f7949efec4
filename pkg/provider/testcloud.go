// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestCloud is a provider's Cloud with the Writer its tests, the demo and the benchmarks write
// objects with (no controller writes objects, so the Writer is not part of Cloud). It is a
// conformance.Cloud, whose harness builds its Stores from it.
type TestCloud[C config.ProviderConfig] interface {
	Cloud[C]
	// NewWriter builds the Writer of creds.
	NewWriter(ctx context.Context, creds Credentials) (objectstore.Writer, error)
}
