// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The IAM part of the GCS front: there is no emulator of GCP's IAM, so the front plays the
// subset of the IAM REST API (iam.googleapis.com/v1) the extension calls -- service accounts and
// their keys -- and storage's bucket IAM policies, and enforces them on storage requests.

// serviceAccount is a service account created through the IAM API.
type serviceAccount struct {
	email, displayName, description string
	keys                            []string // user-managed key IDs
	// lagKeys is how many of its newest keys the next key listing omits (LagKeyListingOnce).
	lagKeys int
}

// LagKeyListingOnce makes the next key listing of the service account email omit its n newest
// keys, as IAM's eventually consistent listing can right after they are created.
func (g *GCS) LagKeyListingOnce(email string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sa := g.serviceAccounts[email]; sa != nil {
		sa.lagKeys = n
	}
}

// bucketPolicy is a bucket's IAM policy.
type bucketPolicy struct {
	Bindings []policyBinding `json:"bindings"`
	etag     int
}

type policyBinding struct {
	Role    string   `json:"role"`
	Members []string `json:"members"`
}

// Roles that allow object operations, the one that allows bucket operations, and those that allow
// reading a bucket's metadata without its ACLs (storage.buckets.get: the legacy bucket roles; a
// read with projection=full returns the ACLs too and needs storage.buckets.getIamPolicy).
var (
	objectRoles    = []string{"roles/storage.objectAdmin", "roles/storage.objectUser", "roles/storage.admin"}
	objectGetRoles = append([]string{"roles/storage.objectViewer"}, objectRoles...)
	bucketRoles    = []string{"roles/storage.admin"}
	bucketGetRoles = []string{"roles/storage.legacyBucketReader", "roles/storage.legacyBucketWriter", "roles/storage.legacyBucketOwner", "roles/storage.admin"}
)

// ServiceAccountEmails lists the service accounts created through the IAM API.
func (g *GCS) ServiceAccountEmails() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for e := range g.serviceAccounts {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// ServiceAccountKeyIDs lists the user-managed keys of a service account created through the
// IAM API (nil if there is no such account).
func (g *GCS) ServiceAccountKeyIDs(email string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sa := g.serviceAccounts[email]; sa != nil {
		return slices.Clone(sa.keys)
	}
	return nil
}

// BucketMembers returns the members bound to role on bucket.
func (g *GCS) BucketMembers(bucket, role string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.buckets[bucket]; b != nil && b.iam != nil {
		for _, bind := range b.iam.Bindings {
			if bind.Role == role {
				return slices.Clone(bind.Members)
			}
		}
	}
	return nil
}

// authorize lets the project's own identities do anything and a service account created through
// the IAM API only what its bindings allow: object requests where the bucket's policy binds it
// with an object role, or a managed folder's policy does and every object the request names
// (a compose's and a rewrite's sources and destination, a listing's prefix) lies in that folder
// (gcs_folders.go); bucket requests in buckets that bind it as admin; managed folder requests
// with objectAdmin or admin on the bucket (the roles that hold storage.managedFolders.*);
// nothing project-wide.
func (g *GCS) authorize(identity string, r *http.Request, body []byte) error {
	g.mu.Lock()
	isCreated := g.serviceAccounts[identity] != nil
	g.mu.Unlock()
	if !isCreated {
		return nil
	}
	path := r.URL.EscapedPath()
	for _, p := range []string{"/upload", "/download"} {
		path = strings.TrimPrefix(path, p)
	}
	// The XML API's object read, GET /<bucket>/<object> (the storage client's default reader,
	// which etcd-backup-restore's restore uses), is an object GET like the JSON API's.
	if bucket, object, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/"); ok && object != "" && r.Method == http.MethodGet &&
		!strings.HasPrefix(path, "/storage/") && !strings.HasPrefix(path, "/iam/") && !strings.HasPrefix(path, "/v1/") {
		path = "/storage/v1/b/" + bucket + "/o/" + object
	}
	parts := strings.Split(strings.TrimPrefix(path, "/storage/v1/"), "/")
	if !strings.HasPrefix(path, "/storage/v1/b/") || len(parts) < 2 {
		return fmt.Errorf("%s does not have permission for %s %s in project %s", identity, r.Method, r.URL.Path, g.ProjectID)
	}
	member := "serviceAccount:" + identity
	if accesses, ok := g.objectAccesses(r, path, body); ok {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, a := range accesses {
			if !g.allowedObject(member, a) {
				return fmt.Errorf("%s does not have %s access to the Google Cloud Storage object %s/%s (or it may not exist)", identity, a.permission(), a.bucket, a.name)
			}
		}
		return nil
	}
	bucket := unescape(parts[1])
	roles, perm := bucketRoles, "storage.buckets."+strings.ToLower(r.Method)
	switch {
	case len(parts) >= 3 && parts[2] == "managedFolders":
		roles, perm = []string{"roles/storage.objectAdmin", "roles/storage.admin"}, "storage.managedFolders."+strings.ToLower(r.Method)
	case len(parts) == 2 && r.Method == http.MethodGet && r.URL.Query().Get("projection") == "full":
		perm = "storage.buckets.getIamPolicy"
	case len(parts) == 2 && r.Method == http.MethodGet:
		roles = bucketGetRoles
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.buckets[bucket]; b != nil && b.iam != nil && binds(b.iam, member, roles) {
		return nil
	}
	return fmt.Errorf("%s does not have %s access to the Google Cloud Storage bucket %s", identity, perm, bucket)
}

// serveBucketPolicy is GET and PUT of /storage/v1/b/{bucket}/iam, with etag preconditions.
func (g *GCS) serveBucketPolicy(w http.ResponseWriter, r *http.Request, bucket string, body []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[bucket]
	if b == nil {
		jsonError(w, http.StatusNotFound, "notFound", "The specified bucket does not exist.")
		return
	}
	if b.iam == nil {
		b.iam = &bucketPolicy{Bindings: []policyBinding{{Role: "roles/storage.legacyBucketOwner", Members: []string{"projectOwner:" + g.ProjectID}}}, etag: 1}
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut:
		var in struct {
			Bindings []policyBinding `json:"bindings"`
			Etag     string          `json:"etag"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			jsonError(w, http.StatusBadRequest, "invalid", "bad policy")
			return
		}
		if in.Etag != "" && in.Etag != policyEtag(b.iam.etag) {
			jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "The etag of the policy does not match")
			return
		}
		b.iam = &bucketPolicy{Bindings: in.Bindings, etag: b.iam.etag + 1}
	default:
		jsonError(w, http.StatusMethodNotAllowed, "invalid", "method not allowed")
		return
	}
	stack.WriteJSON(w, http.StatusOK, map[string]any{"kind": "storage#policy", "resourceId": "projects/_/buckets/" + bucket,
		"version": 1, "etag": policyEtag(b.iam.etag), "bindings": b.iam.Bindings})
}

func policyEtag(n int) string { return base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(n))) }

// serveIAM plays the IAM API's service accounts and keys:
//
//	POST   /v1/projects/{p}/serviceAccounts
//	GET    /v1/projects/{p}/serviceAccounts (pageSize, pageToken: every account of the project)
//	GET    /v1/projects/{p}/serviceAccounts/{email}
//	PATCH  /v1/projects/{p}/serviceAccounts/{email} (displayName, description)
//	DELETE /v1/projects/{p}/serviceAccounts/{email}
//	POST   /v1/projects/{p}/serviceAccounts/{email}/keys
//	GET    /v1/projects/{p}/serviceAccounts/{email}/keys
//	DELETE /v1/projects/{p}/serviceAccounts/{email}/keys/{id}
//
// Errors have the API's shape (code, message, status); only the project's own identities get
// here (authorize refuses created service accounts anything outside their buckets).
func (g *GCS) serveIAM(w http.ResponseWriter, r *http.Request, body []byte) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/projects/"), "/")
	if len(parts) < 2 || parts[1] != "serviceAccounts" || (parts[0] != g.ProjectID && parts[0] != "-") {
		gcpIAMError(w, http.StatusNotFound, "NOT_FOUND", "unknown resource "+r.URL.Path)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case len(parts) == 2 && r.Method == http.MethodPost:
		var in struct {
			AccountID      string `json:"accountId"`
			ServiceAccount struct {
				DisplayName string `json:"displayName"`
				Description string `json:"description"`
			} `json:"serviceAccount"`
		}
		if err := json.Unmarshal(body, &in); err != nil || len(in.AccountID) < 6 || len(in.AccountID) > 30 {
			gcpIAMError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "accountId must be 6 to 30 characters")
			return
		}
		email := in.AccountID + "@" + g.ProjectID + ".iam.gserviceaccount.com"
		if g.serviceAccountLimit > 0 && len(g.serviceAccounts) >= g.serviceAccountLimit {
			limitReachedError(w, "Maximum number of service accounts on project reached.")
			return
		}
		if g.serviceAccounts[email] != nil {
			gcpIAMError(w, http.StatusConflict, "ALREADY_EXISTS", "Service account "+in.AccountID+" already exists within project projects/"+g.ProjectID+".")
			return
		}
		sa := &serviceAccount{email: email, displayName: in.ServiceAccount.DisplayName, description: in.ServiceAccount.Description}
		g.serviceAccounts[email] = sa
		g.writeServiceAccount(w, sa)
		return
	case len(parts) == 2 && r.Method == http.MethodGet:
		g.listServiceAccounts(w, r)
		return
	case len(parts) < 3:
		gcpIAMError(w, http.StatusMethodNotAllowed, "INVALID_ARGUMENT", "method not allowed")
		return
	}
	sa := g.serviceAccounts[parts[2]]
	if sa == nil {
		gcpIAMError(w, http.StatusNotFound, "NOT_FOUND", "Service account projects/"+parts[0]+"/serviceAccounts/"+parts[2]+" does not exist.")
		return
	}
	switch {
	case len(parts) == 3 && r.Method == http.MethodGet:
		g.writeServiceAccount(w, sa)
	case len(parts) == 3 && r.Method == http.MethodPatch:
		var in struct {
			ServiceAccount struct {
				DisplayName string `json:"displayName"`
				Description string `json:"description"`
			} `json:"serviceAccount"`
			UpdateMask string `json:"updateMask"`
		}
		if err := json.Unmarshal(body, &in); err != nil || in.UpdateMask == "" {
			gcpIAMError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "updateMask is required")
			return
		}
		for _, f := range strings.Split(in.UpdateMask, ",") {
			switch f {
			case "displayName":
				if len(in.ServiceAccount.DisplayName) > 100 {
					gcpIAMError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "displayName has more than 100 characters")
					return
				}
				sa.displayName = in.ServiceAccount.DisplayName
			case "description":
				sa.description = in.ServiceAccount.Description
			default:
				gcpIAMError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "unknown field in updateMask: "+f)
				return
			}
		}
		g.writeServiceAccount(w, sa)
	case len(parts) == 3 && r.Method == http.MethodDelete:
		for _, id := range sa.keys {
			delete(g.keys, id)
		}
		// A deleted account's tokens stop working (authorize would take them for the
		// project's own identity otherwise).
		for token, who := range g.accessTokens {
			if who == sa.email {
				delete(g.accessTokens, token)
			}
		}
		delete(g.serviceAccounts, sa.email)
		stack.WriteJSON(w, http.StatusOK, map[string]any{})
	case len(parts) == 4 && parts[3] == "keys" && r.Method == http.MethodPost:
		if len(sa.keys) >= 10 {
			limitReachedError(w, "Maximum number of keys on account reached.")
			return
		}
		g.issued++
		id := fmt.Sprintf("%040x", time.Now().UnixNano()+int64(g.issued))
		g.mu.Unlock() // newKey takes the lock
		file := g.newKey(sa.email, id)
		g.mu.Lock()
		sa.keys = append(sa.keys, id)
		stack.WriteJSON(w, http.StatusOK, map[string]any{"name": keyName(g.ProjectID, sa.email, id), "privateKeyType": "TYPE_GOOGLE_CREDENTIALS_FILE",
			"privateKeyData": base64.StdEncoding.EncodeToString(file), "keyAlgorithm": "KEY_ALG_RSA_2048", "keyType": "USER_MANAGED",
			"validAfterTime": time.Now().UTC().Format(time.RFC3339)})
	case len(parts) == 4 && parts[3] == "keys" && r.Method == http.MethodGet:
		// Like GCP, the listing includes a system-managed key unless asked for user-managed ones.
		keys := []map[string]string{}
		if !slices.Contains(r.URL.Query()["keyTypes"], "USER_MANAGED") {
			keys = append(keys, map[string]string{"name": keyName(g.ProjectID, sa.email, "system-managed"), "keyType": "SYSTEM_MANAGED"})
		}
		for _, id := range sa.keys[:max(0, len(sa.keys)-sa.lagKeys)] {
			keys = append(keys, map[string]string{"name": keyName(g.ProjectID, sa.email, id), "keyType": "USER_MANAGED"})
		}
		sa.lagKeys = 0
		stack.WriteJSON(w, http.StatusOK, map[string]any{"keys": keys})
	case len(parts) == 5 && parts[3] == "keys" && r.Method == http.MethodDelete:
		i := slices.Index(sa.keys, parts[4])
		if i < 0 {
			gcpIAMError(w, http.StatusNotFound, "NOT_FOUND", "Service account key "+parts[4]+" does not exist.")
			return
		}
		sa.keys = slices.Delete(sa.keys, i, i+1)
		delete(g.keys, parts[4])
		stack.WriteJSON(w, http.StatusOK, map[string]any{})
	default:
		gcpIAMError(w, http.StatusMethodNotAllowed, "INVALID_ARGUMENT", "method not allowed")
	}
}

// listServiceAccounts is projects.serviceAccounts.list: every account of the project, sorted by
// email, pageSize a page (GCP: at most 100, the default 20), the next page's token the last
// email of the page. The caller holds g.mu.
func (g *GCS) listServiceAccounts(w http.ResponseWriter, r *http.Request) {
	size, err := strconv.Atoi(r.URL.Query().Get("pageSize"))
	if err != nil || size <= 0 {
		size = 20
	}
	size = min(size, 100)
	emails := slices.Sorted(mapKeys(g.serviceAccounts))
	after := r.URL.Query().Get("pageToken")
	start, _ := slices.BinarySearch(emails, after)
	if after != "" && start < len(emails) && emails[start] == after {
		start++
	}
	page := emails[start:min(start+size, len(emails))]
	accounts := []map[string]any{}
	for _, e := range page {
		sa := g.serviceAccounts[e]
		accounts = append(accounts, map[string]any{"name": "projects/" + g.ProjectID + "/serviceAccounts/" + sa.email, "projectId": g.ProjectID,
			"email": sa.email, "displayName": sa.displayName, "description": sa.description})
	}
	out := map[string]any{"accounts": accounts}
	if start+size < len(emails) {
		out["nextPageToken"] = page[len(page)-1]
	}
	stack.WriteJSON(w, http.StatusOK, out)
}

// serveQuotaInfo plays the one read of the Cloud Quotas API the entry issuer makes (there is no
// emulator of it):
//
//	GET /v1/projects/{p}/locations/global/services/iam.googleapis.com/quotaInfos/ServiceAccountsPerProject
//
// It answers the QuotaInfo of the project's service accounts with the cap SetServiceAccountLimit
// set, the one CreateServiceAccount enforces, and -1 without a cap (the value third parties
// report GCP's API to show for projects it calls unlimited). Any other quota is NOT_FOUND.
func (g *GCS) serveQuotaInfo(w http.ResponseWriter, r *http.Request) {
	want := "/v1/projects/" + g.ProjectID + "/locations/global/services/iam.googleapis.com/quotaInfos/ServiceAccountsPerProject"
	if r.Method != http.MethodGet || r.URL.Path != want {
		gcpIAMError(w, http.StatusNotFound, "NOT_FOUND", "unknown quota "+r.URL.Path)
		return
	}
	g.mu.Lock()
	limit := g.serviceAccountLimit
	g.mu.Unlock()
	if limit == 0 {
		limit = -1
	}
	stack.WriteJSON(w, http.StatusOK, map[string]any{
		"name":    strings.TrimPrefix(r.URL.Path, "/v1/"),
		"quotaId": "ServiceAccountsPerProject", "service": "iam.googleapis.com", "containerType": "PROJECT", "isPrecise": true,
		"dimensionsInfos": []map[string]any{{"dimensions": map[string]string{}, "details": map[string]any{"value": strconv.Itoa(limit)}, "applicableLocations": []string{"global"}}},
	})
}

func keyName(project, email, id string) string {
	return "projects/" + project + "/serviceAccounts/" + email + "/keys/" + id
}

func (g *GCS) writeServiceAccount(w http.ResponseWriter, sa *serviceAccount) {
	stack.WriteJSON(w, http.StatusOK, map[string]any{"name": "projects/" + g.ProjectID + "/serviceAccounts/" + sa.email, "projectId": g.ProjectID,
		"email": sa.email, "displayName": sa.displayName, "description": sa.description, "uniqueId": fmt.Sprint(len(sa.email))})
}

func gcpIAMError(w http.ResponseWriter, code int, status, message string) {
	stack.WriteJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}

// CreateServiceAccount creates a service account behind the extension's back (someone else's).
func (g *GCS) CreateServiceAccount(accountID, description string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	email := accountID + "@" + g.ProjectID + ".iam.gserviceaccount.com"
	g.serviceAccounts[email] = &serviceAccount{email: email, description: description}
}
