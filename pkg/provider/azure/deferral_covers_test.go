// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"fmt"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// deferralCovers reads back, from the management-plane and blob stand-ins, that the account's
// deferred-deletion rule is in place and enabled, and that every base blob, version and snapshot
// under prefix carries the tag it deletes by.
func deferralCovers(arm *azurestack.ARM, blobs *azurestack.BlobStandIn, store conformance.Stores) func(ctx context.Context, bucket, prefix string) error {
	return func(ctx context.Context, bucket, prefix string) error {
		account := azureprovider.AccountName(bucket)
		policy, _ := arm.Lifecycle(account)["properties"].(map[string]any)["policy"].(map[string]any)
		rules, _ := policy["rules"].([]any)
		found := false
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			if rule["name"] == azureprovider.DeferredDeletionRule && rule["enabled"] == true {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("the rule %s of account %s is missing or disabled: %v", azureprovider.DeferredDeletionRule, account, rules)
		}
		keys, err := conformance.ListKeys(ctx, store, bucket, prefix)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return fmt.Errorf("no blobs under %q", prefix)
		}
		for _, k := range keys {
			for which, tags := range blobs.Tags(azurestack.StandInAccount, bucket, k) {
				if tags[azureprovider.DeferredDeletionTag] != "true" {
					return fmt.Errorf("%s %s has tags %v; want %s=true", k, which, tags, azureprovider.DeferredDeletionTag)
				}
			}
		}
		return nil
	}
}
