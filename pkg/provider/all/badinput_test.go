// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package all_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// TestSharedBadInput runs the shared rows (badinput.Shared) on every registered provider's API:
// each wrong input is refused as an invalid configuration (ERR_CONFIGURATION_PROBLEM) naming its
// field path, before any call (the API is SDK-free: there is nothing it could call). The head
// alone must decode, so that a row fails for its own reason.
func TestSharedBadInput(t *testing.T) {
	for typ, api := range all.APIs() {
		t.Run(typ, func(t *testing.T) {
			if _, err := api.DecodeBucketConfig([]byte(badinput.Head(typ))); err != nil {
				t.Fatalf("the head %q does not decode: %v", badinput.Head(typ), err)
			}
			badinput.Run(t, badinput.Harness{}, badinput.Shared(typ, api))
		})
	}
}
