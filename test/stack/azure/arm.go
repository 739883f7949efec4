// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// ARM is a stand-in for Microsoft Entra ID's token endpoint and the parts of Azure Resource
// Manager the Azure extension calls: resource groups, storage accounts with their two keys,
// blob containers with immutability policies, and lifecycle management policies. There is no
// emulator of Azure's management plane; this plays it over TLS (the SDK sends bearer tokens only
// over https) and records every request. It is not Azure: it knows only what the extension asks.
//
// A storage account it creates reports Azurite's stand-in account as its blob endpoint, so the
// data plane is real. Azurite cannot regenerate keys: a regenerated key takes the other of the
// two values Azurite accepts for that account, so a revoked key is not refused by Azurite; tests
// check which key was regenerated and published instead.
type ARM struct {
	*httptest.Server

	// TenantID, ClientID, ClientSecret and SubscriptionID are the service principal it accepts.
	TenantID, ClientID, ClientSecret, SubscriptionID string

	blobEndpoint string
	blobs        *azblob.Client // Azurite's stand-in account, where containers are mirrored
	mu           sync.Mutex
	requests     []ARMRequest
	tokens       map[string]bool
	groups       map[string]map[string]any // by lowercase name: the resource group's JSON
	accounts     map[string]map[string]any // by lowercase name
	keys         map[string]*[2]int        // account: index into StandInKeys of key1, key2
	containers   map[string]map[string]any // account/container
	policies     map[string]map[string]any // account/container: immutability policy
	lifecycle    map[string]map[string]any // account: management policy
	blobService  map[string]map[string]any // account: blob service properties
	etags        int
	failures     map[string]int // "METHOD pathSuffix" -> status to answer
	// enforce, when set, is told which containers a policy protects (EnforceImmutability).
	enforce func(container string, locked bool)
	// rewriteLifecycle, when set, changes a management policy before it is stored.
	rewriteLifecycle func(map[string]any)
	assertion        string
}

// ARMRequest is one recorded request.
type ARMRequest struct {
	Method, Path string
	Body         string
}

// StartARM starts the stand-in; accounts it creates report blobEndpoint (Azurite's stand-in
// account) as their primary blob endpoint.
func StartARM(blobEndpoint string) *ARM {
	a := &ARM{
		TenantID: "00000000-0000-0000-0000-00000000000t", ClientID: "00000000-0000-0000-0000-00000000000c",
		ClientSecret: "stand-in-client-secret", SubscriptionID: "00000000-0000-0000-0000-00000000000s",
		blobEndpoint: blobEndpoint,
		tokens:       map[string]bool{}, groups: map[string]map[string]any{}, accounts: map[string]map[string]any{},
		keys: map[string]*[2]int{}, containers: map[string]map[string]any{}, policies: map[string]map[string]any{},
		lifecycle: map[string]map[string]any{}, blobService: map[string]map[string]any{}, failures: map[string]int{},
	}
	cred, err := azblob.NewSharedKeyCredential(StandInAccount, StandInKeys[0])
	if err != nil {
		panic(err) // a constant key
	}
	if a.blobs, err = azblob.NewClientWithSharedKeyCredential(blobEndpoint, cred, nil); err != nil {
		panic(err)
	}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	return a
}

// mirror creates or deletes a container in Azurite's stand-in account as the management plane
// does in Azure, so that the data plane finds what the management plane created.
func (a *ARM) mirror(r *http.Request, container string, create bool) error {
	var err error
	if create {
		_, err = a.blobs.CreateContainer(r.Context(), container, nil)
		if bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
			err = nil
		}
	} else {
		_, err = a.blobs.DeleteContainer(r.Context(), container, nil)
		if bloberror.HasCode(err, bloberror.ContainerNotFound) {
			err = nil
		}
	}
	return err
}

func clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

var (
	tokenPath     = regexp.MustCompile(`^/([^/]+)/oauth2/v2\.0/token$`)
	discoveryPath = regexp.MustCompile(`^/([^/]+)/v2\.0/\.well-known/openid-configuration$`)
	// /subscriptions/{sub}/resourcegroups/{rg}[/providers/microsoft.storage/storageaccounts/{acct}[/rest]]
	resourcePath = regexp.MustCompile(`^/subscriptions/([^/]+)/resourcegroups/([^/]+(?:/resources)?)(?:/providers/microsoft\.storage/storageaccounts/([^/]+)(/.*)?)?$`)
	containerRe  = regexp.MustCompile(`^/blobservices/default/containers/([^/]+)(/immutabilitypolicies/default(/lock|/extend)?)?$`)
	containersRe = regexp.MustCompile(`^/blobservices/default/containers/?$`)
)

func armError(w http.ResponseWriter, status int, code, message string) {
	stack.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message}})
}

func (a *ARM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.ToLower(r.URL.Path)
	if m := discoveryPath.FindStringSubmatch(r.URL.Path); m != nil {
		// The endpoints are on the host the client asked: the stand-in's own address, or Entra
		// ID's public host where a client with a fixed cloud reaches it through Redirect.
		base := "https://" + r.Host
		stack.WriteJSON(w, 200, map[string]any{
			"token_endpoint":         base + "/" + m[1] + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/" + m[1] + "/oauth2/v2.0/authorize",
			"issuer":                 base + "/" + m[1] + "/v2.0",
		})
		return
	}
	if m := tokenPath.FindStringSubmatch(r.URL.Path); m != nil {
		a.token(w, r, m[1], body)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, ARMRequest{Method: r.Method, Path: path, Body: string(body)})
	if !a.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		armError(w, 401, "InvalidAuthenticationToken", "the access token is invalid")
		return
	}
	for key, status := range a.failures {
		method, suffix, _ := strings.Cut(key, " ")
		if r.Method == method && strings.HasSuffix(path, suffix) {
			delete(a.failures, key)
			armError(w, status, http.StatusText(status), "failure injected by the test")
			return
		}
	}
	m := resourcePath.FindStringSubmatch(path)
	if m == nil || m[1] != strings.ToLower(a.SubscriptionID) {
		armError(w, 404, "SubscriptionNotFound", "no such subscription or path: "+path)
		return
	}
	group, account, rest := m[2], m[3], m[4]
	if account == "" && strings.HasSuffix(path, "/resources") {
		a.serveGroupResources(w, strings.TrimSuffix(group, "/resources"))
		return
	}
	if account == "" {
		a.serveGroup(w, r, group, body)
		return
	}
	if a.groups[group] == nil {
		armError(w, 404, "ResourceGroupNotFound", "resource group "+group+" not found")
		return
	}
	if rest == "" {
		a.serveAccount(w, r, group, account, body)
		return
	}
	if a.accounts[account] == nil {
		armError(w, 404, "ResourceNotFound", "storage account "+account+" not found")
		return
	}
	switch {
	case rest == "/listkeys" && r.Method == http.MethodPost:
		stack.WriteJSON(w, 200, a.keyList(account))
	case rest == "/regeneratekey" && r.Method == http.MethodPost:
		var req struct {
			KeyName string `json:"keyName"`
		}
		_ = json.Unmarshal(body, &req)
		k := a.keys[account]
		switch strings.ToLower(req.KeyName) {
		case "key1":
			k[0] = 1 - k[0]
		case "key2":
			k[1] = 1 - k[1]
		default:
			armError(w, 400, "InvalidValuesForRequestParameters", "keyName must be key1 or key2")
			return
		}
		stack.WriteJSON(w, 200, a.keyList(account))
	case rest == "/managementpolicies/default":
		a.serveLifecycle(w, r, account, body)
	case rest == "/blobservices/default":
		a.serveBlobService(w, r, account, body)
	case containersRe.MatchString(rest) && r.Method == http.MethodGet:
		a.listContainers(w, account)
	default:
		if c := containerRe.FindStringSubmatch(rest); c != nil {
			if c[2] == "" {
				a.serveContainer(w, r, account, c[1], body)
			} else {
				a.serveImmutability(w, r, account, c[1], strings.TrimPrefix(c[3], "/"), body)
			}
			return
		}
		armError(w, 404, "NotFound", "the stand-in does not serve "+r.Method+" "+path)
	}
}

func (a *ARM) token(w http.ResponseWriter, _ *http.Request, tenant string, body []byte) {
	form, _ := parseForm(body)
	ok := tenant == a.TenantID && form.Get("client_id") == a.ClientID
	a.mu.Lock()
	assertion := a.assertion
	a.mu.Unlock()
	switch {
	case form.Get("client_secret") != "":
		ok = ok && form.Get("client_secret") == a.ClientSecret
	case form.Get("client_assertion") != "":
		ok = ok && assertion != "" && form.Get("client_assertion") == assertion
	default:
		ok = false
	}
	if !ok {
		stack.WriteJSON(w, 401, map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided.", "error_codes": []int{7000215}})
		return
	}
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	token := base64.RawURLEncoding.EncodeToString(buf)
	a.mu.Lock()
	a.tokens[token] = true
	a.mu.Unlock()
	stack.WriteJSON(w, 200, map[string]any{"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600, "access_token": token})
}

func (a *ARM) serveGroup(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	switch r.Method {
	case http.MethodGet:
		if g := a.groups[name]; g != nil {
			stack.WriteJSON(w, 200, g)
			return
		}
		armError(w, 404, "ResourceGroupNotFound", "resource group "+name+" not found")
	case http.MethodPut:
		var g map[string]any
		_ = json.Unmarshal(body, &g)
		g["id"] = "/subscriptions/" + a.SubscriptionID + "/resourceGroups/" + name
		g["name"] = name
		g["properties"] = map[string]any{"provisioningState": "Succeeded"}
		a.groups[name] = g
		stack.WriteJSON(w, 200, g)
	case http.MethodDelete:
		for acct, res := range a.accounts {
			if strings.EqualFold(res["group"].(string), name) {
				a.dropAccount(r, acct)
			}
		}
		delete(a.groups, name)
		w.WriteHeader(http.StatusOK)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

func (a *ARM) serveGroupResources(w http.ResponseWriter, group string) {
	if a.groups[group] == nil {
		armError(w, 404, "ResourceGroupNotFound", "resource group "+group+" not found")
		return
	}
	value := []any{}
	for _, acct := range a.accounts {
		if strings.EqualFold(acct["group"].(string), group) {
			value = append(value, map[string]any{"id": acct["id"], "name": acct["name"], "type": acct["type"]})
		}
	}
	stack.WriteJSON(w, 200, map[string]any{"value": value})
}

func (a *ARM) newAccount(group, name string, spec map[string]any) map[string]any {
	props, _ := spec["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props["provisioningState"] = "Succeeded"
	props["primaryEndpoints"] = map[string]any{"blob": a.blobEndpoint}
	spec["properties"] = props
	spec["id"] = "/subscriptions/" + a.SubscriptionID + "/resourceGroups/" + group + "/providers/Microsoft.Storage/storageAccounts/" + name
	spec["name"] = name
	spec["type"] = "Microsoft.Storage/storageAccounts"
	spec["group"] = group
	return spec
}

func (a *ARM) dropAccount(r *http.Request, name string) {
	delete(a.accounts, name)
	delete(a.keys, name)
	delete(a.lifecycle, name)
	delete(a.blobService, name)
	for k := range a.containers {
		if container, ok := strings.CutPrefix(k, name+"/"); ok {
			_ = a.mirror(r, container, false)
			delete(a.containers, k)
			delete(a.policies, k)
		}
	}
}

func (a *ARM) serveAccount(w http.ResponseWriter, r *http.Request, group, name string, body []byte) {
	acct := a.accounts[name]
	if acct != nil && r.Method != http.MethodPut && !strings.EqualFold(acct["group"].(string), group) {
		acct = nil // Azure finds an account only in its own resource group
	}
	switch r.Method {
	case http.MethodGet:
		if acct == nil {
			armError(w, 404, "ResourceNotFound", "storage account "+name+" not found")
			return
		}
		stack.WriteJSON(w, 200, acct)
	case http.MethodPut:
		if acct != nil && !strings.EqualFold(acct["group"].(string), group) {
			armError(w, 409, "StorageAccountAlreadyTaken", "The storage account named "+name+" is already taken.")
			return
		}
		var spec map[string]any
		_ = json.Unmarshal(body, &spec)
		a.accounts[name] = a.newAccount(group, name, spec)
		a.keys[name] = &[2]int{0, 1}
		stack.WriteJSON(w, 200, a.accounts[name])
	case http.MethodPatch:
		if acct == nil {
			armError(w, 404, "ResourceNotFound", "storage account "+name+" not found")
			return
		}
		var up map[string]any
		_ = json.Unmarshal(body, &up)
		if p, ok := up["properties"].(map[string]any); ok {
			for k, v := range p {
				acct["properties"].(map[string]any)[k] = v
			}
		}
		if s, ok := up["sku"]; ok {
			acct["sku"] = s
		}
		if t, ok := up["tags"]; ok {
			acct["tags"] = t
		}
		stack.WriteJSON(w, 200, acct)
	case http.MethodDelete:
		if acct == nil {
			w.WriteHeader(http.StatusNoContent) // nothing of that name in this group
			return
		}
		for k, p := range a.policies {
			if strings.HasPrefix(k, name+"/") && p["properties"].(map[string]any)["state"] == "Locked" {
				armError(w, 409, "ContainerImmutabilityPolicyLocked", "the account holds a container with a locked immutability policy")
				return
			}
		}
		a.dropAccount(r, name)
		w.WriteHeader(http.StatusOK)
	default:
		armError(w, 405, "MethodNotAllowed", r.Method)
	}
}

func parseForm(body []byte) (interface{ Get(string) string }, error) {
	return url.ParseQuery(string(body))
}
