// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"testing"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

// operatorPolicyRule is an operator's rule in the account's management policy: reports/ moved
// to the cool tier after 30 days.
func operatorPolicyRule() map[string]any {
	return map[string]any{"name": "operator-cool-reports", "type": "Lifecycle", "enabled": true,
		"definition": map[string]any{
			"actions": map[string]any{"baseBlob": map[string]any{"tierToCool": map[string]any{"daysAfterModificationGreaterThan": 30.0}}},
			"filters": map[string]any{"blobTypes": []any{"blockBlob"}, "prefixMatch": []any{"reports/"}},
		}}
}

func policyRules(policy map[string]any) []any {
	if policy == nil {
		return nil
	}
	return policy["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)
}

// TestForeignSettingsSurviveTakeoverAndHandBack: on provider-azure's account, an operator's
// management policy rule and a stricter minimum TLS version (TLS1_3) are kept by the takeover,
// by the next reconcile and by the hand-back, which leaves the incumbent's rule in place of
// this extension's beside the operator's.
func TestForeignSettingsSurviveTakeoverAndHandBack(t *testing.T) {
	arm, _, _, bucket := incumbentBucket(t)
	acct := azureprovider.IncumbentAccountName(bucket)
	policy := incumbentPolicy()
	policy["properties"].(map[string]any)["policy"].(map[string]any)["rules"] = append(policyRules(policy), operatorPolicyRule())
	arm.PutLifecycle(acct, policy)
	arm.SetAccount(acct, func(a map[string]any) { a["properties"].(map[string]any)["minimumTlsVersion"] = "TLS1_3" })
	check := func(stage string, wantNames ...string) {
		t.Helper()
		rules := policyRules(arm.Lifecycle(acct))
		var names []string
		operators := 0
		for _, r := range rules {
			names = append(names, r.(map[string]any)["name"].(string))
			if r.(map[string]any)["name"] == "operator-cool-reports" {
				operators++
				if !equalJSON(r, operatorPolicyRule()) {
					t.Errorf("%s: the operator's rule reads %v; want it unchanged: %v", stage, r, operatorPolicyRule())
				}
			}
		}
		if operators != 1 || len(names) != len(wantNames) {
			t.Errorf("%s: rules %v; want %v", stage, names, wantNames)
		}
		for _, n := range wantNames {
			found := false
			for _, got := range names {
				found = found || got == n
			}
			if !found {
				t.Errorf("%s: rules %v; want %s among them", stage, names, n)
			}
		}
		if v := arm.Account(acct)["properties"].(map[string]any)["minimumTlsVersion"]; v != "TLS1_3" {
			t.Errorf("%s: minimumTlsVersion %v; want the stricter TLS1_3 kept", stage, v)
		}
	}
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	for range 2 {
		if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
		check("after the takeover", azureprovider.IncumbentRule, "operator-cool-reports", azureprovider.DeferredDeletionRule)
	}
	hb := armStoreFor(t, arm, arm.ServicePrincipal(), false, &azureapi.BackupBucketConfig{HandBack: true})
	if err := hb.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	check("after the hand-back", azureprovider.IncumbentRule, "operator-cool-reports")
}
