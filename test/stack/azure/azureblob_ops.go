// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// The blob stand-in's blob operations (see BlobStandIn).

// target finds the version a request addresses: the current one, or the one named by
// versionid or snapshot.
func target(r *http.Request, e *blobEntry) *blobVersion {
	q := r.URL.Query()
	if e == nil {
		return nil
	}
	if id := q.Get("versionid"); id != "" {
		if e.current != nil && e.current.id == id {
			return e.current
		}
		for _, v := range e.versions {
			if v.id == id {
				return v
			}
		}
		return nil
	}
	if s := q.Get("snapshot"); s != "" {
		for _, v := range e.snapshots {
			if v.id == s {
				return v
			}
		}
		return nil
	}
	return e.current
}

func (b *BlobStandIn) putBlob(w http.ResponseWriter, r *http.Request, acct *blobAccount, c *blobContainer, name string) {
	if r.Header.Get("x-ms-blob-type") != "BlockBlob" {
		blobError(w, 400, "InvalidHeaderValue", "the stand-in stores block blobs only")
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		blobError(w, 400, "InvalidInput", err.Error())
		return
	}
	b.write(w, r, acct, c, name, data)
}

// write stores data as the current version of name (Put Blob, Put Block List), keeping the one it
// replaces as a previous version where versioning says so. In a locked container an existing
// blob cannot be replaced (Azure's container-level WORM: no overwrite, no delete). It plays the
// request's If-None-Match: * and If-Match (the current version's ETag) as Azure does: 409
// BlobAlreadyExists, 412 ConditionNotMet.
func (b *BlobStandIn) write(w http.ResponseWriter, r *http.Request, acct *blobAccount, c *blobContainer, name string, data []byte) {
	e := c.blobs[name]
	exists := e != nil && e.current != nil
	if r.Header.Get("If-None-Match") == "*" && exists {
		blobError(w, 409, "BlobAlreadyExists", "The specified blob already exists.")
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && (!exists || (m != "*" && m != e.current.etag())) {
		blobError(w, 412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.")
		return
	}
	if e != nil && e.current != nil && c.locked {
		blobError(w, 409, "BlobImmutableDueToPolicy", "This operation is not permitted as the blob is immutable due to a policy.")
		return
	}
	if e == nil {
		e = &blobEntry{}
		c.blobs[name] = e
	}
	b.retire(acct, e)
	now, id := b.tick()
	v := &blobVersion{data: data, modified: now, tags: map[string]string{}}
	if acct.versioning {
		v.id = id
		w.Header().Set("x-ms-version-id", id)
	}
	e.current = v
	w.Header().Set("ETag", v.etag())
	w.Header().Set("Last-Modified", now.Format(http.TimeFormat))
	w.WriteHeader(http.StatusCreated)
}

// retire keeps the current version of e as a previous version when versioning is on (a blob
// written before it was switched on gets its version ID now) or it has a version ID (it was
// written while versioning was on); a blob written and replaced without versioning is gone.
func (b *BlobStandIn) retire(acct *blobAccount, e *blobEntry) {
	if e.current == nil {
		return
	}
	if acct.versioning && e.current.id == "" {
		_, e.current.id = b.tick()
	}
	if e.current.id != "" {
		e.versions = append(e.versions, e.current)
	}
	e.current = nil
}

func (b *BlobStandIn) getBlob(w http.ResponseWriter, r *http.Request, c *blobContainer, name string) {
	v := target(r, c.blobs[name])
	if v == nil {
		blobError(w, 404, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(v.data)))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("x-ms-blob-type", "BlockBlob")
	w.Header().Set("ETag", v.etag())
	w.Header().Set("Last-Modified", v.modified.Format(http.TimeFormat))
	if v.id != "" && r.URL.Query().Get("snapshot") == "" {
		w.Header().Set("x-ms-version-id", v.id)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(v.data)
	}
}

func (b *BlobStandIn) snapshot(w http.ResponseWriter, c *blobContainer, name string) {
	e := c.blobs[name]
	if e == nil || e.current == nil {
		blobError(w, 404, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	now, id := b.tick()
	tags := map[string]string{}
	for k, v := range e.current.tags {
		tags[k] = v
	}
	e.snapshots = append(e.snapshots, &blobVersion{id: id, data: e.current.data, tags: tags, modified: now})
	w.Header().Set("x-ms-snapshot", id)
	w.WriteHeader(http.StatusCreated)
}

func (b *BlobStandIn) deleteBlob(w http.ResponseWriter, r *http.Request, acct *blobAccount, c *blobContainer, name string) {
	e := c.blobs[name]
	q := r.URL.Query()
	v := target(r, e)
	switch {
	case v == nil:
		blobError(w, 404, "BlobNotFound", "The specified blob does not exist.")
		return
	case c.locked:
		blobError(w, 409, "BlobImmutableDueToPolicy", "This operation is not permitted as the blob is immutable due to a policy.")
		return
	case q.Get("versionid") != "" && v == e.current:
		blobError(w, 403, "OperationNotAllowedOnRootBlob", "This operation is not permitted on the current version of the blob.")
		return
	case q.Get("versionid") != "":
		e.versions = remove(e.versions, v)
	case q.Get("snapshot") != "":
		e.snapshots = remove(e.snapshots, v)
	default:
		switch r.Header.Get("x-ms-delete-snapshots") {
		case "":
			if len(e.snapshots) > 0 {
				blobError(w, 409, "SnapshotsPresent", "This operation is not permitted because the blob has snapshots.")
				return
			}
		case "only":
			e.snapshots = nil
			w.WriteHeader(http.StatusAccepted)
			return
		case "include":
			e.snapshots = nil
		}
		if acct.versioning {
			b.retire(acct, e)
		}
		e.current = nil
	}
	if e.current == nil && len(e.versions) == 0 && len(e.snapshots) == 0 {
		delete(c.blobs, name)
	}
	w.Header().Set("x-ms-delete-type-permanent", "true")
	w.WriteHeader(http.StatusAccepted)
}

func remove(vs []*blobVersion, v *blobVersion) []*blobVersion {
	out := vs[:0:0]
	for _, x := range vs {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

type blobTagSet struct {
	XMLName xml.Name `xml:"Tags"`
	Tags    []struct {
		Key   string `xml:"Key"`
		Value string `xml:"Value"`
	} `xml:"TagSet>Tag"`
}

func (b *BlobStandIn) setTags(w http.ResponseWriter, r *http.Request, c *blobContainer, name string) {
	v := target(r, c.blobs[name])
	if v == nil {
		blobError(w, 404, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	var set blobTagSet
	if err := xml.NewDecoder(r.Body).Decode(&set); err != nil {
		blobError(w, 400, "InvalidXmlDocument", err.Error())
		return
	}
	tags := map[string]string{}
	for _, t := range set.Tags {
		tags[t.Key] = t.Value
	}
	v.tags = tags
	w.WriteHeader(http.StatusNoContent)
}

func (b *BlobStandIn) getTags(w http.ResponseWriter, r *http.Request, c *blobContainer, name string) {
	v := target(r, c.blobs[name])
	if v == nil {
		blobError(w, 404, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?>`+tagsXML(v.tags))
}

func tagsXML(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("<Tags><TagSet>")
	for _, k := range keys {
		fmt.Fprintf(&sb, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", xmlEscape(k), xmlEscape(tags[k]))
	}
	sb.WriteString("</TagSet></Tags>")
	return sb.String()
}
