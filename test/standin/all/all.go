// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package all registers every provider's stand-in (test/standin/<type>), for the tests that run
// every provider; a binary for one provider imports only that provider's package. A provider adds
// its import here; pkg/provider/all's pieces test fails while one of all.Types is missing.
package all

import (
	// Each import registers its provider's stand-in (standin.Register in its init): the point
	// of this package is to have them all.
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/aws"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/azure"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/gcp"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/local"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/openstack"
)
