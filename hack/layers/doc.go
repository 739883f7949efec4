// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package layers holds the test that keeps the module's imports to the layer order of
// docs/dev/architecture.md: no import points up, and siblings (the controllers, the providers, the
// providers' APIs) do not import each other.
package layers
