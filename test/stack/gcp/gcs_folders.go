// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Managed folders, which no emulator has (fake-gcs-server included): the front plays their JSON
// API (insert, get, list, delete, getIamPolicy, setIamPolicy under /storage/v1/b/{bucket}/managedFolders)
// and enforces their IAM policies as GCS documents them
// (https://cloud.google.com/storage/docs/managed-folders, "IAM for managed folders"): a role
// granted on managed folder `F/` applies to every object whose name starts with `F/`; a listing
// is allowed by it only with a prefix that starts with `F/` (the front's reading of GCS's rule
// that a principal with access to a managed folder only lists with that folder as prefix). GCS
// creates managed folders only in buckets with uniform bucket-level access. A request is checked
// object by object: the sources of a compose, rewrite or copy need read access, its destination
// write access; a resumable upload's later requests are checked against the name its first
// request gave.

// objectAccess is one permission check of a request on an object (or, with list, a listing
// prefix).
type objectAccess struct {
	bucket, name string
	write, list  bool
}

func (a objectAccess) permission() string {
	switch {
	case a.list:
		return "storage.objects.list"
	case a.write:
		return "storage.objects.create/delete/update"
	}
	return "storage.objects.get"
}

// objectAccesses returns what an object request needs, or ok false for a request that is not on
// objects (bucket and managed folder requests). path is the request's escaped path without
// /upload or /download.
func (g *GCS) objectAccesses(r *http.Request, path string, body []byte) (accesses []objectAccess, ok bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/storage/v1/"), "/")
	if len(parts) < 3 || parts[0] != "b" || parts[2] != "o" {
		return nil, false
	}
	bucket := unescape(parts[1])
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if len(parts) == 3 {
		switch {
		case read:
			return []objectAccess{{bucket: bucket, name: r.URL.Query().Get("prefix"), list: true}}, true
		case r.URL.Query().Get("upload_id") != "":
			g.mu.Lock()
			name, known := g.uploads[r.URL.Query().Get("upload_id")]
			g.mu.Unlock()
			if !known {
				name = "\x00unknown upload" // refused to all but the bucket's principals
			}
			return []objectAccess{{bucket: bucket, name: name, write: true}}, true
		}
		name := r.URL.Query().Get("name")
		if name == "" { // the JSON API also takes the name from the metadata
			var meta struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(body, &meta)
			name = meta.Name
		}
		return []objectAccess{{bucket: bucket, name: name, write: true}}, true
	}
	// /b/{b}/o/{o}[/compose | /rewriteTo/b/{b}/o/{o} | /copyTo/b/{b}/o/{o}]
	for i := 3; i < len(parts); i++ {
		if (parts[i] == "rewriteTo" || parts[i] == "copyTo") && i+4 < len(parts) && parts[i+1] == "b" && parts[i+3] == "o" {
			return []objectAccess{
				{bucket: bucket, name: unescape(strings.Join(parts[3:i], "/"))},
				{bucket: unescape(parts[i+2]), name: unescape(strings.Join(parts[i+4:], "/")), write: true},
			}, true
		}
	}
	name := unescape(strings.Join(parts[3:], "/"))
	if dest, ok := strings.CutSuffix(name, "/compose"); ok && r.Method == http.MethodPost {
		var in struct {
			SourceObjects []struct {
				Name string `json:"name"`
			} `json:"sourceObjects"`
		}
		_ = json.Unmarshal(body, &in)
		accesses = []objectAccess{{bucket: bucket, name: dest, write: true}}
		for _, s := range in.SourceObjects {
			accesses = append(accesses, objectAccess{bucket: bucket, name: s.Name})
		}
		return accesses, true
	}
	return []objectAccess{{bucket: bucket, name: name, write: !read}}, true
}

// allowedObject reports whether member may do a on the bucket's objects: bound on the bucket, or
// on a managed folder whose name starts a's object name or listing prefix. Called with g.mu held.
func (g *GCS) allowedObject(member string, a objectAccess) bool {
	roles := objectGetRoles
	if a.write {
		roles = objectRoles
	}
	b := g.buckets[a.bucket]
	if b == nil {
		return false
	}
	if b.iam != nil && binds(b.iam, member, roles) {
		return true
	}
	for name, f := range b.folders {
		if strings.HasPrefix(a.name, name) && binds(f, member, roles) {
			return true
		}
	}
	return false
}

func binds(p *bucketPolicy, member string, roles []string) bool {
	return slices.ContainsFunc(p.Bindings, func(b policyBinding) bool {
		return slices.Contains(roles, b.Role) && slices.Contains(b.Members, member)
	})
}

// recordUpload remembers the object a resumable upload writes, from the answer to its first
// request (the Location header's upload_id), so that its later requests are checked against it;
// and points that Location where the client reached the front (fake-gcs-server names itself
// there, which would let the later requests bypass the front's authentication and
// authorization).
func (g *GCS) recordUpload(resp *http.Response) {
	q := resp.Request.URL.Query()
	if q.Get("uploadType") != "resumable" || q.Get("upload_id") != "" || resp.StatusCode != http.StatusOK {
		return
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("upload_id") == "" {
		return
	}
	if origin, err := url.Parse(resp.Request.Header.Get(originHeader)); err == nil && origin.Host != "" {
		loc.Scheme, loc.Host = origin.Scheme, origin.Host
		resp.Header.Set("Location", loc.String())
	}
	g.mu.Lock()
	g.uploads[loc.Query().Get("upload_id")] = q.Get("name")
	g.mu.Unlock()
}

// originHeader carries, from serve to recordUpload, the scheme and host the client reached the
// front at (through a proxy or a TLS terminator that forwards the Host header and sets
// X-Forwarded-Proto), so that a resumable upload's Location sends its later requests there.
const originHeader = "X-Gcs-Front-Origin"

// origin is the scheme and host r's client reached the front at.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// managedFolder is a managed folder's resource.
type managedFolder struct {
	created time.Time
}

// serveManagedFolders plays /storage/v1/b/{bucket}/managedFolders[/{name}[/iam]] for the
// project's identities (authorize lets a created service account reach it only with a role that
// holds storage.managedFolders.*: objectAdmin or admin on the bucket).
func (g *GCS) serveManagedFolders(w http.ResponseWriter, r *http.Request, bucket string, rest []string, body []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[bucket]
	if b == nil {
		jsonError(w, http.StatusNotFound, "notFound", "The specified bucket does not exist.")
		return
	}
	if b.folders == nil {
		b.folders, b.folderMeta = map[string]*bucketPolicy{}, map[string]managedFolder{}
	}
	var name string
	isIAM := len(rest) > 0 && rest[len(rest)-1] == "iam"
	if isIAM {
		rest = rest[:len(rest)-1]
	}
	if len(rest) > 0 {
		name = unescape(strings.Join(rest, "/"))
		if !strings.HasSuffix(name, "/") {
			name += "/"
		}
	}
	switch {
	case name == "" && r.Method == http.MethodPost:
		var in struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(body, &in) != nil || in.Name == "" || !strings.HasSuffix(in.Name, "/") {
			jsonError(w, http.StatusBadRequest, "invalid", "A managed folder name must end with '/'.")
			return
		}
		if !uniformAccess(b) {
			jsonError(w, http.StatusBadRequest, "invalid", "Managed folders can only be created in buckets that have uniform bucket-level access enabled.")
			return
		}
		if _, exists := b.folders[in.Name]; exists {
			jsonError(w, http.StatusConflict, "conflict", "The managed folder you tried to create already exists.")
			return
		}
		b.folders[in.Name] = &bucketPolicy{etag: 1}
		b.folderMeta[in.Name] = managedFolder{created: time.Now()}
		g.writeFolder(w, bucket, in.Name, b.folderMeta[in.Name])
	case name == "" && r.Method == http.MethodGet:
		items := []map[string]any{}
		for _, n := range slices.Sorted(mapKeys(b.folders)) {
			if strings.HasPrefix(n, r.URL.Query().Get("prefix")) {
				items = append(items, folderResource(bucket, n, b.folderMeta[n]))
			}
		}
		stack.WriteJSON(w, http.StatusOK, map[string]any{"kind": "storage#managedFolders", "items": items})
	case b.folders[name] == nil:
		jsonError(w, http.StatusNotFound, "notFound", "The managed folder does not exist.")
	case !isIAM && r.Method == http.MethodGet:
		g.writeFolder(w, bucket, name, b.folderMeta[name])
	case !isIAM && r.Method == http.MethodDelete:
		if r.URL.Query().Get("allowNonEmpty") != "true" && g.holdsObjects(bucket, name) {
			jsonError(w, http.StatusConflict, "conflict", "The managed folder you tried to delete is not empty.")
			return
		}
		delete(b.folders, name)
		delete(b.folderMeta, name)
		w.WriteHeader(http.StatusNoContent)
	case isIAM && r.Method == http.MethodGet:
		writeFolderPolicy(w, bucket, name, b.folders[name])
	case isIAM && r.Method == http.MethodPut:
		var in struct {
			Bindings []policyBinding `json:"bindings"`
			Etag     string          `json:"etag"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			jsonError(w, http.StatusBadRequest, "invalid", "bad policy")
			return
		}
		if in.Etag != "" && in.Etag != policyEtag(b.folders[name].etag) {
			jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "The etag of the policy does not match")
			return
		}
		b.folders[name] = &bucketPolicy{Bindings: in.Bindings, etag: b.folders[name].etag + 1}
		writeFolderPolicy(w, bucket, name, b.folders[name])
	default:
		jsonError(w, http.StatusMethodNotAllowed, "invalid", "method not allowed")
	}
}

// uniformAccess reports whether the bucket has uniform bucket-level access. Called with g.mu held.
func uniformAccess(b *bucketState) bool {
	var cfg struct {
		UniformBucketLevelAccess struct {
			Enabled bool `json:"enabled"`
		} `json:"uniformBucketLevelAccess"`
	}
	_ = json.Unmarshal(b.fields["iamConfiguration"], &cfg)
	return cfg.UniformBucketLevelAccess.Enabled
}

// holdsObjects asks fake-gcs-server whether any object's name starts with prefix.
func (g *GCS) holdsObjects(bucket, prefix string) bool {
	u := g.backend.JoinPath("storage", "v1", "b", bucket, "o")
	u.RawQuery = url.Values{"prefix": {prefix}, "maxResults": {"1"}}.Encode()
	resp, err := g.client.Get(u.String())
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	var out struct {
		Items []json.RawMessage `json:"items"`
	}
	return resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Items) > 0
}

func folderResource(bucket, name string, m managedFolder) map[string]any {
	return map[string]any{"kind": "storage#managedFolder", "id": bucket + "/" + name, "bucket": bucket, "name": name,
		"createTime": m.created.UTC().Format(time.RFC3339), "updateTime": m.created.UTC().Format(time.RFC3339), "metageneration": "1"}
}

func (g *GCS) writeFolder(w http.ResponseWriter, bucket, name string, m managedFolder) {
	stack.WriteJSON(w, http.StatusOK, folderResource(bucket, name, m))
}

func writeFolderPolicy(w http.ResponseWriter, bucket, name string, p *bucketPolicy) {
	bindings := p.Bindings
	if bindings == nil {
		bindings = []policyBinding{}
	}
	stack.WriteJSON(w, http.StatusOK, map[string]any{"kind": "storage#policy", "resourceId": "projects/_/buckets/" + bucket + "/managedFolders/" + name,
		"version": 1, "etag": policyEtag(p.etag), "bindings": bindings})
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ManagedFolderMembers returns the members bound to role on managed folder name of bucket.
func (g *GCS) ManagedFolderMembers(bucket, name, role string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.buckets[bucket]; b != nil && b.folders[name] != nil {
		for _, bind := range b.folders[name].Bindings {
			if bind.Role == role {
				return slices.Clone(bind.Members)
			}
		}
	}
	return nil
}

// ManagedFolders lists the managed folders of bucket.
func (g *GCS) ManagedFolders(bucket string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.buckets[bucket]; b != nil {
		return slices.Sorted(mapKeys(b.folders))
	}
	return nil
}

// SetServiceAccountLimit caps the project's service accounts at n (0: no cap, as by default):
// CreateServiceAccount then answers as GCP does at its quota (100 by default).
func (g *GCS) SetServiceAccountLimit(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.serviceAccountLimit = n
}

// limitReachedError is GCP's answer at a limit of the IAM API (the project's service accounts,
// an account's keys): 429 RESOURCE_EXHAUSTED with a RetryInfo of a day, as GCP answers them
// (quoted in kubeflow/pipelines#1052 and googlearchive/k8s-service-catalog#228).
func limitReachedError(w http.ResponseWriter, message string) {
	stack.WriteJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
		"code": http.StatusTooManyRequests, "message": message, "status": "RESOURCE_EXHAUSTED",
		"details": []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "86401s"}},
	}})
}
