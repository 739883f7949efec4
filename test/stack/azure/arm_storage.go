// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The ARM stand-in's storage sub-resources: account keys, containers, container immutability
// policies, blob service properties and lifecycle management policies, and the tests' access to
// them.

func (a *ARM) serveContainer(w http.ResponseWriter, r *http.Request, account, name string, body []byte) {
	key := account + "/" + name
	c := a.containers[key]
	switch r.Method {
	case http.MethodGet:
		if c == nil {
			armError(w, 404, "ContainerNotFound", "container "+name+" not found")
			return
		}
		stack.WriteJSON(w, 200, c)
	case http.MethodPut, http.MethodPatch:
		var spec map[string]any
		_ = json.Unmarshal(body, &spec)
		if c == nil {
			if err := a.mirror(r, name, true); err != nil {
				armError(w, 500, "InternalError", "mirroring the container into Azurite: "+err.Error())
				return
			}
			c = map[string]any{"name": name, "properties": map[string]any{}}
			a.containers[key] = c
		}
		if p, ok := spec["properties"].(map[string]any); ok {
			for k, v := range p {
				c["properties"].(map[string]any)[k] = v
			}
		}
		stack.WriteJSON(w, 200, c)
	case http.MethodDelete:
		if err := a.mirror(r, name, false); err != nil {
			armError(w, 500, "InternalError", "mirroring the deletion into Azurite: "+err.Error())
			return
		}
		delete(a.containers, key)
		delete(a.policies, key)
		w.WriteHeader(http.StatusOK)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

// listContainers plays List (blob containers) of an account, in one page.
func (a *ARM) listContainers(w http.ResponseWriter, account string) {
	value := []any{}
	names := []string{}
	for k := range a.containers {
		if c, ok := strings.CutPrefix(k, account+"/"); ok {
			names = append(names, c)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		c := a.containers[account+"/"+n]
		value = append(value, map[string]any{"id": a.accounts[account]["id"].(string) + "/blobServices/default/containers/" + n, "name": c["name"], "type": "Microsoft.Storage/storageAccounts/blobServices/containers", "properties": c["properties"]})
	}
	stack.WriteJSON(w, 200, map[string]any{"value": value})
}

// serveImmutability plays Azure's container immutability policy: If-Match on every change of an
// existing policy, a locked policy only extended, never shortened, replaced or deleted.
func (a *ARM) serveImmutability(w http.ResponseWriter, r *http.Request, account, container, action string, body []byte) {
	key := account + "/" + container
	if a.containers[key] == nil {
		armError(w, 404, "ContainerNotFound", "container "+container+" not found")
		return
	}
	p := a.policies[key]
	state := func() string {
		if p == nil {
			return ""
		}
		return p["properties"].(map[string]any)["state"].(string)
	}
	days := func(b []byte) (float64, bool) {
		var spec struct {
			Properties struct {
				Days *float64 `json:"immutabilityPeriodSinceCreationInDays"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(b, &spec)
		if spec.Properties.Days == nil {
			return 0, false
		}
		return *spec.Properties.Days, true
	}
	if p != nil && r.Method != http.MethodGet && r.Header.Get("If-Match") != p["etag"] {
		armError(w, 412, "ConditionNotMet", "If-Match does not match the policy's etag")
		return
	}
	a.etags++
	etag := `"` + strconv.Itoa(a.etags) + `"`
	switch {
	case r.Method == http.MethodGet && action == "":
		if p == nil {
			// Azure answers the GET of a container without a policy as if the policy "default"
			// existed, without a state or period (pulumi-azure-native#1492 and #2154 observed it;
			// provider-azure v1.62.1 relies on it: pkg/azure/client/blobcontainers.go:43-50 reads a
			// missing state as no policy and fails on any error).
			stack.WriteJSON(w, 200, map[string]any{"name": "default", "properties": map[string]any{}})
			return
		}
		stack.WriteJSON(w, 200, p)
	case r.Method == http.MethodPut && action == "":
		if state() == "Locked" {
			armError(w, 409, "ContainerImmutabilityPolicyLocked", "a locked policy can only be extended")
			return
		}
		d, ok := days(body)
		if !ok {
			armError(w, 400, "InvalidRequestContent", "immutabilityPeriodSinceCreationInDays is required")
			return
		}
		p = map[string]any{"name": "default", "etag": etag, "properties": map[string]any{"immutabilityPeriodSinceCreationInDays": d, "state": "Unlocked"}}
		a.policies[key] = p
		a.enforced(container, d > 0)
		stack.WriteJSON(w, 200, p)
	case r.Method == http.MethodDelete && action == "":
		if p == nil || state() == "Locked" {
			armError(w, 409, "ContainerImmutabilityPolicyLocked", "no unlocked policy to delete")
			return
		}
		delete(a.policies, key)
		a.enforced(container, false)
		stack.WriteJSON(w, 200, p)
	case r.Method == http.MethodPost && action == "lock":
		if p == nil {
			armError(w, 404, "ImmutabilityPolicyNotFound", "no immutability policy")
			return
		}
		p["properties"].(map[string]any)["state"] = "Locked"
		p["etag"] = etag
		stack.WriteJSON(w, 200, p)
	case r.Method == http.MethodPost && action == "extend":
		d, ok := days(body)
		cur := 0.0
		if p != nil {
			cur = p["properties"].(map[string]any)["immutabilityPeriodSinceCreationInDays"].(float64)
		}
		if state() != "Locked" || !ok || d < cur {
			armError(w, 409, "ImmutabilityPolicyCannotBeExtended", "only a locked policy can be extended, and only to a longer period")
			return
		}
		p["properties"].(map[string]any)["immutabilityPeriodSinceCreationInDays"] = d
		p["etag"] = etag
		stack.WriteJSON(w, 200, p)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

// EnforceImmutability makes the container immutability policies hold on the data plane: lock is
// called with a container's name and whether a policy with a retention period protects it now,
// whenever a policy is set or deleted. An unlocked policy protects as a locked one does (Azure:
// the lock only stops it from being shortened or removed). Azurite enforces no policy; the blob
// stand-in's LockContainer does (all of this stand-in's accounts are one data-plane account).
func (a *ARM) EnforceImmutability(lock func(container string, locked bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.enforce = lock
}

func (a *ARM) enforced(container string, locked bool) {
	if a.enforce != nil {
		a.enforce(container, locked)
	}
}

// BlobService returns a copy of an account's blob service properties (nil if never set).
func (a *ARM) BlobService(account string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.blobService[strings.ToLower(account)])
}

func (a *ARM) serveBlobService(w http.ResponseWriter, r *http.Request, account string, body []byte) {
	switch r.Method {
	case http.MethodGet:
		p := a.blobService[account]
		if p == nil {
			p = map[string]any{"name": "default", "properties": map[string]any{}}
		}
		stack.WriteJSON(w, 200, p)
	case http.MethodPut:
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		p["name"] = "default"
		a.blobService[account] = p
		stack.WriteJSON(w, 200, p)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

func (a *ARM) serveLifecycle(w http.ResponseWriter, r *http.Request, account string, body []byte) {
	switch r.Method {
	case http.MethodGet:
		if p := a.lifecycle[account]; p != nil {
			stack.WriteJSON(w, 200, p)
			return
		}
		armError(w, 404, "ManagementPolicyNotFound", "no management policy")
	case http.MethodPut:
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		p["name"] = "DefaultManagementPolicy"
		if a.rewriteLifecycle != nil {
			a.rewriteLifecycle(p)
		}
		a.lifecycle[account] = p
		stack.WriteJSON(w, 200, p)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

func (a *ARM) keyList(account string) map[string]any {
	k := a.keys[account]
	return map[string]any{"keys": []any{
		map[string]any{"keyName": "key1", "value": StandInKeys[k[0]], "permissions": "FULL"},
		map[string]any{"keyName": "key2", "value": StandInKeys[k[1]], "permissions": "FULL"},
	}}
}

// ImmutabilityPolicy returns a copy of a container's immutability policy (nil if none).
func (a *ARM) ImmutabilityPolicy(account, container string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.policies[strings.ToLower(account+"/"+container)])
}

// Lifecycle returns a copy of an account's management policy (nil if none).
func (a *ARM) Lifecycle(account string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.lifecycle[strings.ToLower(account)])
}

// SetLifecycle changes an account's management policy (drift: a rule disabled or widened).
func (a *ARM) SetLifecycle(account string, change func(policy map[string]any)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	change(a.lifecycle[strings.ToLower(account)])
}

// RewriteLifecycle changes every management policy written from now on before it is stored,
// as something between the extension and the account (an Azure Policy) might.
func (a *ARM) RewriteLifecycle(rewrite func(policy map[string]any)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rewriteLifecycle = rewrite
}

// PutContainer creates a container in an account directly, as somebody else would (in the
// stand-in's records only: it is not mirrored into Azurite's shared stand-in account).
func (a *ARM) PutContainer(account, container string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.containers[strings.ToLower(account+"/"+container)] = map[string]any{"name": container, "properties": map[string]any{"publicAccess": "None"}}
}

// DropContainer removes a container directly from the stand-in's records.
func (a *ARM) DropContainer(account, container string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.containers, strings.ToLower(account+"/"+container))
}

// Container returns a copy of a container (nil if none).
func (a *ARM) Container(account, container string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.containers[strings.ToLower(account+"/"+container)])
}

// PutLifecycle stores an account's management policy directly, as another writer (the incumbent
// extension) puts it.
func (a *ARM) PutLifecycle(account string, policy map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	policy["name"] = "DefaultManagementPolicy"
	a.lifecycle[strings.ToLower(account)] = policy
}

// PutImmutabilityPolicy stores a container's time-based immutability policy directly, as another
// writer (the incumbent extension, an operator) left it.
func (a *ARM) PutImmutabilityPolicy(account, container string, days int, locked bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	state := "Unlocked"
	if locked {
		state = "Locked"
	}
	a.etags++
	a.policies[strings.ToLower(account+"/"+container)] = map[string]any{"name": "default", "etag": `"` + strconv.Itoa(a.etags) + `"`,
		"properties": map[string]any{"immutabilityPeriodSinceCreationInDays": float64(days), "state": state}}
}
