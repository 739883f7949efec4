// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The front's bucket operations: creation, metadata patches with metagenerations, retention
// locks.

func (g *GCS) createBucket(w http.ResponseWriter, r *http.Request, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		jsonError(w, http.StatusBadRequest, "invalid", "bad body")
		return
	}
	var name string
	_ = json.Unmarshal(req["name"], &name)
	if g.opts.ForeignPrefix != "" && strings.HasPrefix(name, g.opts.ForeignPrefix) {
		jsonError(w, http.StatusConflict, "conflict", "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.")
		return
	}
	if tooManyRules(req["lifecycle"]) {
		jsonError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("A bucket can have at most %d lifecycle rules.", maxLifecycleRules))
		return
	}
	state := &bucketState{created: time.Now(), fields: map[string]json.RawMessage{}, metageneration: 1}
	for _, f := range overlayFields {
		if v, ok := req[f]; ok && string(v) != "null" {
			state.fields[f] = v
		}
	}
	loc := "US"
	if v, ok := req["location"]; ok {
		_ = json.Unmarshal(v, &loc)
	}
	state.fields["location"], _ = json.Marshal(strings.ToUpper(loc))
	if _, ok := state.fields["softDeletePolicy"]; !ok {
		state.fields["softDeletePolicy"] = json.RawMessage(`{"retentionDurationSeconds":"604800"}`) // GCS's default
	}
	rec := &stack.StatusRecorder{ResponseWriter: w}
	g.proxy.ServeHTTP(rec, r)
	if rec.Status/100 == 2 {
		g.mu.Lock()
		if _, exists := g.buckets[name]; !exists {
			g.buckets[name] = state
		}
		g.mu.Unlock()
	}
}

// checkMetageneration answers 412 when the request's precondition does not hold.
func checkMetageneration(w http.ResponseWriter, r *http.Request, b *bucketState) bool {
	if v := r.URL.Query().Get("ifMetagenerationMatch"); v != "" && v != strconv.FormatInt(b.metageneration, 10) {
		jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "Precondition Failed")
		return false
	}
	return true
}

func retentionSeconds(raw json.RawMessage) int64 {
	if raw == nil {
		return 0
	}
	var rp struct {
		RetentionPeriod json.Number `json:"retentionPeriod"`
	}
	_ = json.Unmarshal(raw, &rp)
	s, _ := strconv.ParseInt(strings.Trim(string(rp.RetentionPeriod), `"`), 10, 64)
	return s
}

func (g *GCS) patchBucket(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		jsonError(w, http.StatusBadRequest, "invalid", "bad body")
		return
	}
	g.mu.Lock()
	b := g.buckets[name]
	if b == nil {
		g.mu.Unlock()
		g.proxy.ServeHTTP(w, r) // fake-gcs-server answers 404
		return
	}
	if !checkMetageneration(w, r, b) {
		g.mu.Unlock()
		return
	}
	if tooManyRules(req["lifecycle"]) {
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("A bucket can have at most %d lifecycle rules.", maxLifecycleRules))
		return
	}
	if _, ok := req["lifecycle"]; ok && b.dropLifecycle > 0 {
		b.dropLifecycle--
		delete(req, "lifecycle")
	}
	if rp, ok := req["retentionPolicy"]; ok && b.locked {
		if string(rp) == "null" || retentionSeconds(rp) < retentionSeconds(b.fields["retentionPolicy"]) {
			g.mu.Unlock()
			jsonError(w, http.StatusForbidden, "forbidden", "Cannot remove or reduce the retention period of a locked retention policy.")
			return
		}
	}
	for _, f := range overlayFields {
		v, ok := req[f]
		switch {
		case !ok:
		case string(v) == "null":
			delete(b.fields, f)
		case f == "labels":
			labels := map[string]*string{}
			_ = json.Unmarshal(b.fields[f], &labels)
			var upd map[string]*string
			_ = json.Unmarshal(v, &upd)
			for k, val := range upd {
				if val == nil {
					delete(labels, k)
				} else {
					labels[k] = val
				}
			}
			b.fields[f], _ = json.Marshal(labels)
		default:
			b.fields[f] = v
		}
	}
	b.metageneration++
	// fake-gcs-server switches versioning off on any update that does not name it, and reads
	// nothing else of the body that the front does not keep: it gets the kept versioning alone.
	versioning := b.fields["versioning"]
	if versioning == nil {
		versioning = json.RawMessage(`{"enabled":false}`)
	}
	g.mu.Unlock()
	fwd, _ := json.Marshal(map[string]json.RawMessage{"versioning": versioning})
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(fwd)), int64(len(fwd))
	r.Header.Set("Content-Length", strconv.Itoa(len(fwd)))
	g.proxy.ServeHTTP(w, r)
}

// tooManyRules reports whether a lifecycle configuration has more rules than GCS accepts.
func tooManyRules(lifecycle json.RawMessage) bool {
	var lc struct {
		Rule []json.RawMessage `json:"rule"`
	}
	_ = json.Unmarshal(lifecycle, &lc)
	return len(lc.Rule) > maxLifecycleRules
}

func (g *GCS) lockRetention(w http.ResponseWriter, r *http.Request, name string) {
	g.mu.Lock()
	b := g.buckets[name]
	switch {
	case b == nil:
		g.mu.Unlock()
		jsonError(w, http.StatusNotFound, "notFound", "The specified bucket does not exist.")
		return
	case r.URL.Query().Get("ifMetagenerationMatch") == "":
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "required", "Required parameter: ifMetagenerationMatch")
		return
	case !checkMetageneration(w, r, b):
		g.mu.Unlock()
		return
	case retentionSeconds(b.fields["retentionPolicy"]) == 0:
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "invalid", "No retention policy to lock.")
		return
	}
	b.locked = true
	b.metageneration++
	g.mu.Unlock()
	// Answer with the bucket, as GCS does.
	get := r.Clone(r.Context())
	get.Method, get.Body, get.ContentLength = http.MethodGet, http.NoBody, 0
	get.URL = &url.URL{Path: "/storage/v1/b/" + name}
	g.proxy.ServeHTTP(w, get)
}
