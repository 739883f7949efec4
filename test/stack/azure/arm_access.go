// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
)

// What tests read and change of the ARM stand-in behind the extension's back.

// ServicePrincipal is a service principal secret's data the stand-in accepts.
func (a *ARM) ServicePrincipal() map[string][]byte {
	return map[string][]byte{"tenantID": []byte(a.TenantID), "clientID": []byte(a.ClientID), "clientSecret": []byte(a.ClientSecret), "subscriptionID": []byte(a.SubscriptionID)}
}

// WorkloadIdentity is a workload identity secret's data; the stand-in accepts its token as the
// client assertion.
func (a *ARM) WorkloadIdentity() map[string][]byte {
	a.mu.Lock()
	a.assertion = "stand-in-workload-identity-token"
	a.mu.Unlock()
	cfg := fmt.Sprintf("apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nclientID: %s\ntenantID: %s\nsubscriptionID: %s\n", a.ClientID, a.TenantID, a.SubscriptionID)
	return map[string][]byte{"config": []byte(cfg), "token": []byte("stand-in-workload-identity-token")}
}

// Requests returns the recorded management requests (token requests excluded) whose method is
// one of methods (all when none given).
func (a *ARM) Requests(methods ...string) []ARMRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ARMRequest
	for _, r := range a.requests {
		if len(methods) == 0 || slices.Contains(methods, r.Method) {
			out = append(out, r)
		}
	}
	return out
}

// Writes counts recorded requests that change something (PUT, PATCH, DELETE and POST actions
// other than listKeys).
func (a *ARM) Writes() int {
	n := 0
	for _, r := range a.Requests("PUT", "PATCH", "DELETE", "POST") {
		if !strings.HasSuffix(r.Path, "/listkeys") {
			n++
		}
	}
	return n
}

// Account returns a copy of the stand-in's account resource (nil if none).
func (a *ARM) Account(name string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.accounts[strings.ToLower(name)])
}

// SetAccount changes an account's properties (drift) or tags.
func (a *ARM) SetAccount(name string, change func(account map[string]any)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	change(a.accounts[strings.ToLower(name)])
}

// PutAccount creates an account directly (one the extension did not create).
func (a *ARM) PutAccount(group, name, location string, tags map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.accounts[strings.ToLower(name)] = a.newAccount(group, name, map[string]any{"location": location, "tags": toAny(tags), "sku": map[string]any{"name": "Standard_LRS"}, "kind": "StorageV2", "properties": map[string]any{}})
	a.keys[strings.ToLower(name)] = &[2]int{0, 1}
}

// PutGroup creates a resource group directly (one the extension did not create, unless the
// test gives it the extension's tags).
func (a *ARM) PutGroup(name, location string, tags map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := strings.ToLower(name)
	a.groups[n] = map[string]any{"id": "/subscriptions/" + a.SubscriptionID + "/resourceGroups/" + name, "name": name, "location": location,
		"tags": toAny(tags), "properties": map[string]any{"provisioningState": "Succeeded"}}
}

// Group returns a copy of a resource group (nil if none).
func (a *ARM) Group(name string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.groups[strings.ToLower(name)])
}

// Key returns the current value of an account's key ("key1" or "key2").
func (a *ARM) Key(account, keyName string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := a.keys[strings.ToLower(account)]
	if k == nil {
		return ""
	}
	if keyName == "key2" {
		return StandInKeys[k[1]]
	}
	return StandInKeys[k[0]]
}

// FailNext answers the next request whose method is method and whose path ends with suffix
// (case-insensitive) with status.
func (a *ARM) FailNext(method, suffix string, status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failures[method+" "+strings.ToLower(suffix)] = status
}

// RevokeTokens makes every token issued so far invalid and changes the client secret.
func (a *ARM) RevokeTokens() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens = map[string]bool{}
	a.ClientSecret = "rotated-away"
	a.assertion = ""
}

// Cloud is the cloud configuration that points the SDK at the stand-in.
func (a *ARM) Cloud() *cloud.Configuration {
	return &cloud.Configuration{
		ActiveDirectoryAuthorityHost: a.URL + "/",
		Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: a.URL, Audience: "https://management.stand-in"}},
	}
}
