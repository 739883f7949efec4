// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"

// Flags implements provider.Cloud: the gcp binary has only the common flags; everything it needs
// comes from the secret and the providerConfig.
func (*Provider) Flags() provider.Flags { return nil }
