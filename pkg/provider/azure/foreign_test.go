// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"strings"
	"testing"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
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

// TestPlanBucketIsWhatEnsureBucketDoes: a missing bucket is planned without a write (its group
// and account); after EnsureBucket nothing is planned; drift of this extension's settings (its
// rule gone, the account's TLS minimum lowered) is named, without a write, and EnsureBucket then
// leaves nothing to plan. The takeover of provider-azure's account is planned as its adoption.
func TestPlanBucketIsWhatEnsureBucketDoes(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	planner, ok := s.Management.(objectstore.BucketPlanner)
	if !ok {
		t.Fatalf("%T does not implement objectstore.BucketPlanner", s.Management)
	}
	name := newBucketName()
	b := objectstore.Bucket{Name: name, Region: "westeurope"}
	plan := func() []string {
		t.Helper()
		writes := arm.Writes()
		out := conformance.Plan(ctx(t), t, planner, b)
		if n := arm.Writes() - writes; n != 0 {
			t.Fatalf("PlanBucket wrote %d times", n)
		}
		return out
	}
	if got := plan(); len(got) != 2 || got[0] != "create resource group "+name || got[1] != "create storage account "+azureprovider.AccountName(name) {
		t.Fatalf("plan of a missing bucket: %v", got)
	}
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket: %v; want nothing", got)
	}
	acct := azureprovider.AccountName(name)
	arm.PutLifecycle(acct, map[string]any{"properties": map[string]any{"policy": map[string]any{"rules": []any{operatorPolicyRule()}}}})
	arm.SetAccount(acct, func(a map[string]any) { a["properties"].(map[string]any)["minimumTlsVersion"] = "TLS1_0" })
	want := []string{"update storage account settings", "create lifecycle management policy rule " + azureprovider.DeferredDeletionRule}
	for range 2 {
		if got := plan(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("plan with drift: %v; want %v", got, want)
		}
	}
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("plan after EnsureBucket corrected the drift: %v; want nothing", got)
	}
	if names := ruleNames(arm.Lifecycle(acct)); len(names) != 2 || names[0] != "operator-cool-reports" {
		t.Fatalf("rules %v; want the operator's kept beside ours", names)
	}

	arm2, _, _, bucket := incumbentBucket(t)
	p2 := armStore(t, arm2, arm2.ServicePrincipal(), false).Management.(objectstore.BucketPlanner)
	changes, err := p2.PlanBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"})
	if err != nil || len(changes) == 0 || !strings.HasPrefix(changes[0].Setting, "storage account tags") {
		t.Fatalf("plan of the takeover: %v, %v; want the adoption first", changes, err)
	}
}
