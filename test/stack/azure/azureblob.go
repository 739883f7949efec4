// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BlobStandIn is a stand-in for the Azure Blob Storage data plane, for what Azurite does not
// implement: blob versioning (Azurite answers 501 for it). It is an httptest server, not Azure:
// it plays, from Azure's REST documentation, exactly the calls the extension's store makes, on
// path-style URLs (http://<host>/<account>/<container>/<blob>, as an emulator is addressed):
//
//   - Shared Key authorization, checked on every request and every Blob Batch sub-request
//     (string-to-sign as documented; a wrong signature is 403 AuthenticationFailed);
//   - containers: create, properties, set ACL, delete;
//   - Put Blob (block blobs, single request), Put Block (also from a URL: Put Block From URL,
//     see blockFromURL) and Put Block List (of staged blocks only: what etcd-backup-restore's
//     chunked uploads send), Get Blob, Snapshot Blob, Delete Blob with
//     x-ms-delete-snapshots, versionid or snapshot, Set and Get Blob Tags with versionid or
//     snapshot;
//   - List Blobs with include=snapshots,versions,tags, prefix, maxresults (at most 5000, as
//     Azure caps it) and an opaque continuation marker;
//   - Blob Batch (multipart/mixed, at most 256 Delete Blob sub-requests, one sub-response each
//     with its Content-ID);
//   - account-level blob versioning, switched by the test (SetVersioning) the way an operator
//     switches it on the storage account: with it on, every write returns x-ms-version-id and
//     keeps the blob it replaces as a previous version, and deleting the current blob keeps it
//     as a previous version; with it off, writes and deletes replace and remove the current blob
//     and previous versions stay;
//   - a container immutability stand-in (LockContainer, or the ARM stand-in's immutability
//     policies through ARM.EnforceImmutability): every delete in the container, and every
//     overwrite of an existing blob, answers 409 BlobImmutableDueToPolicy, as Azure does within
//     a container's time-based retention period (index tags can still be set, as on Azure).
//
// Known differences from Azure: version IDs and snapshot times come from a counter, not the
// clock; deleting the current version by its version ID is refused with 403
// OperationNotAllowedOnRootBlob (what Azure answers, as recorded by the Azure SDK for Java's
// tests); soft delete, leases, conditional headers, metadata, blob index queries, lifecycle
// management (a management-plane feature, see ARM) and page/append blobs are not played; a lock
// refuses every delete and overwrite whatever the blob's age (every blob a test writes is younger
// than the retention it declares); Put Block List commits staged blocks only (its Committed list,
// of blocks of the current blob, is refused).
type BlobStandIn struct {
	*httptest.Server

	mu       sync.Mutex
	accounts map[string]*blobAccount
	clock    time.Time
	requests []BlobRequest
}

// BlobRequest is one recorded data-plane request (Blob Batch sub-requests are recorded too,
// with Batch set).
type BlobRequest struct {
	Method, Account, Path string
	Query                 url.Values
	Batch                 bool
}

type blobAccount struct {
	keys       [2]string
	versioning bool
	containers map[string]*blobContainer
}

type blobContainer struct {
	public string
	locked bool
	// metadata is the container's, by name as the client sent it.
	metadata map[string]string
	blobs    map[string]*blobEntry
	// staged are the uncommitted blocks (Put Block) by blob name and block ID.
	staged map[string]map[string][]byte
}

// blobEntry is everything stored under one blob name.
type blobEntry struct {
	current   *blobVersion // nil: no current version (deleted, previous versions kept)
	versions  []*blobVersion
	snapshots []*blobVersion
}

type blobVersion struct {
	id       string // version ID, snapshot time, or "" for a blob written without versioning
	data     []byte
	tags     map[string]string
	modified time.Time
}

func (v *blobVersion) etag() string { return fmt.Sprintf(`"0x%X"`, v.modified.UnixNano()) }

// StartBlobStandIn starts the stand-in with Azurite's development account and the stand-in
// account (both keys) that the ARM stand-in hands out.
func StartBlobStandIn() *BlobStandIn {
	b := &BlobStandIn{accounts: map[string]*blobAccount{}, clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	b.accounts[AzuriteAccount] = &blobAccount{keys: [2]string{AzuriteKey, AzuriteKey}, containers: map[string]*blobContainer{}}
	b.accounts[StandInAccount] = &blobAccount{keys: StandInKeys, containers: map[string]*blobContainer{}}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	return b
}

// Host is host:port of the stand-in.
func (b *BlobStandIn) Host() string { return strings.TrimPrefix(b.URL, "http://") }

// SecretData is an account-key secret for the development account on the stand-in.
func (b *BlobStandIn) SecretData() map[string][]byte {
	return map[string][]byte{"storageAccount": []byte(AzuriteAccount), "storageKey": []byte(AzuriteKey), "domain": []byte(b.Host()), "emulatorEnabled": []byte("true")}
}

// StandInEndpoint is the blob endpoint of the stand-in account (for StartARM).
func (b *BlobStandIn) StandInEndpoint() string { return b.URL + "/" + StandInAccount + "/" }

// SetVersioning switches blob versioning of an account on or off.
func (b *BlobStandIn) SetVersioning(account string, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accounts[account].versioning = on
}

// LockContainer makes every delete in a container fail as under an immutability policy (or
// allows deletes again).
func (b *BlobStandIn) LockContainer(account, container string, locked bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.accounts[account].containers[container]; c != nil {
		c.locked = locked
	}
}

// Tags returns the index tags of every version and snapshot stored under a blob name, by
// "current", "version:<id>" and "snapshot:<time>".
func (b *BlobStandIn) Tags(account, container, name string) map[string]map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]map[string]string{}
	c := b.accounts[account].containers[container]
	if c == nil || c.blobs[name] == nil {
		return out
	}
	e := c.blobs[name]
	if e.current != nil {
		out["current"] = e.current.tags
	}
	for _, v := range e.versions {
		out["version:"+v.id] = v.tags
	}
	for _, s := range e.snapshots {
		out["snapshot:"+s.id] = s.tags
	}
	return out
}

// Requests returns the recorded requests.
func (b *BlobStandIn) Requests() []BlobRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]BlobRequest(nil), b.requests...)
}

// tick returns a new, strictly increasing timestamp, formatted as Azure formats version IDs
// and snapshot times.
func (b *BlobStandIn) tick() (time.Time, string) {
	b.clock = b.clock.Add(time.Millisecond)
	return b.clock, b.clock.Format("2006-01-02T15:04:05.0000000Z")
}

// blobError writes an Azure Storage error: the code in x-ms-error-code and in the XML body.
func blobError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, xmlEscape(message))
}

func xmlEscape(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s))
	return sb.String()
}

// authorized checks the Shared Key signature of a request against the account's keys.
func authorized(r *http.Request, account string, keys [2]string) bool {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	name, sig, ok := strings.Cut(cred, ":")
	if scheme != "SharedKey" || !ok || name != account {
		return false
	}
	toSign := stringToSign(r, account)
	for _, k := range keys {
		raw, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			continue
		}
		h := hmac.New(sha256.New, raw)
		_, _ = h.Write([]byte(toSign))
		if hmac.Equal([]byte(base64.StdEncoding.EncodeToString(h.Sum(nil))), []byte(sig)) {
			return true
		}
	}
	return false
}

// stringToSign is Shared Key's string-to-sign for the Blob service (version 2009-09-19 and
// later), as documented in "Authorize with Shared Key".
func stringToSign(r *http.Request, account string) string {
	h := r.Header
	length := h.Get("Content-Length")
	if length == "0" {
		length = ""
	}
	var canonHeaders []string
	for k, v := range h {
		if k := strings.ToLower(k); strings.HasPrefix(k, "x-ms-") {
			canonHeaders = append(canonHeaders, k+":"+strings.Join(v, ","))
		}
	}
	sort.Strings(canonHeaders)
	resource := "/" + account + r.URL.EscapedPath()
	q, _ := url.ParseQuery(r.URL.RawQuery)
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vals := q[k]
		sort.Strings(vals)
		resource += "\n" + strings.ToLower(k) + ":" + strings.Join(vals, ",")
	}
	return strings.Join([]string{
		r.Method, h.Get("Content-Encoding"), h.Get("Content-Language"), length, h.Get("Content-MD5"), h.Get("Content-Type"),
		"", h.Get("If-Modified-Since"), h.Get("If-Match"), h.Get("If-None-Match"), h.Get("If-Unmodified-Since"), h.Get("Range"),
		strings.Join(canonHeaders, "\n"), resource,
	}, "\n")
}

func (b *BlobStandIn) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	account := parts[0]
	w.Header().Set("x-ms-request-id", strconv.FormatInt(time.Now().UnixNano(), 36))
	if v := r.Header.Get("x-ms-version"); v != "" {
		w.Header().Set("x-ms-version", v)
	}
	b.mu.Lock()
	acct := b.accounts[account]
	b.mu.Unlock()
	if acct == nil || !authorized(r, account, acct.keys) {
		blobError(w, 403, "AuthenticationFailed", "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.")
		return
	}
	var container, name string
	if len(parts) > 1 {
		container = parts[1]
	}
	if len(parts) > 2 {
		name = parts[2]
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost && q.Get("comp") == "batch" {
		b.serveBatch(w, r, account, acct)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, BlobRequest{Method: r.Method, Account: account, Path: r.URL.Path, Query: q})
	b.serveLocked(w, r, acct, container, name)
}

// serveLocked serves one request (or Blob Batch sub-request) with b.mu held.
func (b *BlobStandIn) serveLocked(w http.ResponseWriter, r *http.Request, acct *blobAccount, container, name string) {
	q := r.URL.Query()
	if container == "" {
		blobError(w, 400, "InvalidUri", "the stand-in serves no account-level request but Blob Batch")
		return
	}
	if name == "" && q.Get("restype") == "container" {
		b.serveContainer(w, r, acct, container)
		return
	}
	c := acct.containers[container]
	if c == nil {
		blobError(w, 404, "ContainerNotFound", "The specified container does not exist.")
		return
	}
	switch {
	case r.Method == http.MethodPut && q.Get("comp") == "tags":
		b.setTags(w, r, c, name)
	case r.Method == http.MethodGet && q.Get("comp") == "tags":
		b.getTags(w, r, c, name)
	case r.Method == http.MethodPut && q.Get("comp") == "snapshot":
		b.snapshot(w, c, name)
	case r.Method == http.MethodPut && q.Get("comp") == "":
		b.putBlob(w, r, acct, c, name)
	case r.Method == http.MethodPut && q.Get("comp") == "block":
		b.putBlock(w, r, c, name)
	case r.Method == http.MethodPut && q.Get("comp") == "blocklist":
		b.putBlockList(w, r, acct, c, name)
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && q.Get("comp") == "":
		b.getBlob(w, r, c, name)
	case r.Method == http.MethodDelete:
		b.deleteBlob(w, r, acct, c, name)
	default:
		blobError(w, 400, "UnsupportedHttpVerb", "the stand-in does not serve "+r.Method+" "+r.URL.String())
	}
}

func (b *BlobStandIn) serveContainer(w http.ResponseWriter, r *http.Request, acct *blobAccount, name string) {
	q := r.URL.Query()
	c := acct.containers[name]
	switch {
	case r.Method == http.MethodGet && q.Get("comp") == "list":
		if c == nil {
			blobError(w, 404, "ContainerNotFound", "The specified container does not exist.")
			return
		}
		b.listBlobs(w, r, c, name)
	case r.Method == http.MethodPut && q.Get("comp") == "metadata":
		if c == nil {
			blobError(w, 404, "ContainerNotFound", "The specified container does not exist.")
			return
		}
		c.metadata = map[string]string{}
		for k, v := range r.Header {
			if name, ok := strings.CutPrefix(strings.ToLower(k), "x-ms-meta-"); ok && len(v) > 0 {
				c.metadata[name] = v[0]
			}
		}
		w.Header().Set("ETag", `"0x1"`)
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPut && q.Get("comp") == "acl":
		if c == nil {
			blobError(w, 404, "ContainerNotFound", "The specified container does not exist.")
			return
		}
		c.public = r.Header.Get("x-ms-blob-public-access")
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPut:
		if c != nil {
			blobError(w, 409, "ContainerAlreadyExists", "The specified container already exists.")
			return
		}
		acct.containers[name] = &blobContainer{public: r.Header.Get("x-ms-blob-public-access"), blobs: map[string]*blobEntry{}}
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if c == nil {
			w.Header().Set("x-ms-error-code", "ContainerNotFound")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if c.public != "" {
			w.Header().Set("x-ms-blob-public-access", c.public)
		}
		for k, v := range c.metadata {
			w.Header().Set("x-ms-meta-"+k, v)
		}
		w.Header().Set("Last-Modified", b.clock.Format(http.TimeFormat))
		w.Header().Set("ETag", `"0x1"`)
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodDelete:
		if c == nil {
			blobError(w, 404, "ContainerNotFound", "The specified container does not exist.")
			return
		}
		delete(acct.containers, name)
		w.WriteHeader(http.StatusAccepted)
	default:
		blobError(w, 400, "UnsupportedHttpVerb", r.Method)
	}
}
