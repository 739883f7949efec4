// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
)

// listed is one entry of a blob listing: a snapshot, a previous version or the current blob.
type listed struct {
	name string
	rank int // 0 snapshot, 1 previous version, 2 current: Azure lists a name's snapshots and versions before it
	v    *blobVersion
}

func (l listed) key() string { return l.name + "\x00" + strconv.Itoa(l.rank) + "\x00" + l.v.id }

// listBlobs plays List Blobs (flat): names in byte order, snapshots and versions only when
// included, pages of at most maxresults (capped at 5000) with an opaque marker.
func (b *BlobStandIn) listBlobs(w http.ResponseWriter, r *http.Request, c *blobContainer, container string) {
	q := r.URL.Query()
	include := map[string]bool{}
	for _, v := range q["include"] {
		for _, part := range strings.Split(v, ",") {
			include[strings.ToLower(strings.TrimSpace(part))] = true
		}
	}
	maxResults := 5000
	if v := q.Get("maxresults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			blobError(w, 400, "OutOfRangeQueryParameterValue", "maxresults must be at least 1")
			return
		}
		maxResults = min(n, 5000)
	}
	from := ""
	if m := q.Get("marker"); m != "" {
		raw, err := base64.RawURLEncoding.DecodeString(m)
		if err != nil {
			blobError(w, 400, "OutOfRangeInput", "invalid marker")
			return
		}
		from = string(raw)
	}
	prefix := q.Get("prefix")
	var all []listed
	for name, e := range c.blobs {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if include["snapshots"] {
			for _, s := range e.snapshots {
				all = append(all, listed{name, 0, s})
			}
		}
		if include["versions"] {
			for _, v := range e.versions {
				all = append(all, listed{name, 1, v})
			}
		}
		if e.current != nil {
			all = append(all, listed{name, 2, e.current})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key() < all[j].key() })
	start := sort.Search(len(all), func(i int) bool { return all[i].key() >= from })
	page := all[start:]
	next := ""
	if len(page) > maxResults {
		next = base64.RawURLEncoding.EncodeToString([]byte(page[maxResults].key()))
		page = page[:maxResults]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="%s/" ContainerName="%s">`, xmlEscape(b.URL), xmlEscape(container))
	fmt.Fprintf(&sb, "<Prefix>%s</Prefix><Marker>%s</Marker><MaxResults>%d</MaxResults><Blobs>", xmlEscape(prefix), xmlEscape(q.Get("marker")), maxResults)
	for _, l := range page {
		fmt.Fprintf(&sb, "<Blob><Name>%s</Name>", xmlEscape(l.name))
		switch {
		case l.rank == 0:
			fmt.Fprintf(&sb, "<Snapshot>%s</Snapshot>", l.v.id)
		case include["versions"] && l.v.id != "":
			fmt.Fprintf(&sb, "<VersionId>%s</VersionId>", l.v.id)
			if l.rank == 2 {
				sb.WriteString("<IsCurrentVersion>true</IsCurrentVersion>")
			}
		}
		fmt.Fprintf(&sb, "<Properties><Creation-Time>%s</Creation-Time><Last-Modified>%s</Last-Modified><Etag>%s</Etag>", l.v.modified.Format(http.TimeFormat), l.v.modified.Format(http.TimeFormat), strings.Trim(l.v.etag(), `"`))
		fmt.Fprintf(&sb, "<Content-Length>%d</Content-Length><Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>", len(l.v.data))
		fmt.Fprintf(&sb, "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted>")
		if len(l.v.tags) > 0 {
			fmt.Fprintf(&sb, "<TagCount>%d</TagCount>", len(l.v.tags))
		}
		sb.WriteString("</Properties>")
		if include["tags"] && len(l.v.tags) > 0 {
			sb.WriteString(tagsXML(l.v.tags))
		}
		sb.WriteString("</Blob>")
	}
	fmt.Fprintf(&sb, "</Blobs><NextMarker>%s</NextMarker></EnumerationResults>", next)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, sb.String())
}

// maxBatch is Blob Batch's limit of sub-requests.
const maxBatch = 256

// serveBatch plays Blob Batch: a multipart/mixed body of Delete Blob sub-requests, each
// authorized on its own, answered with one application/http part per sub-request carrying its
// Content-ID.
func (b *BlobStandIn) serveBatch(w http.ResponseWriter, r *http.Request, account string, acct *blobAccount) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		blobError(w, 400, "InvalidHeaderValue", "Content-Type must be multipart/mixed with a boundary")
		return
	}
	type sub struct {
		id  string
		req *http.Request
	}
	var subs []sub
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			blobError(w, 400, "InvalidInput", "malformed batch body: "+err.Error())
			return
		}
		raw, _ := io.ReadAll(part)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			blobError(w, 400, "InvalidInput", "malformed batch sub-request: "+err.Error())
			return
		}
		subs = append(subs, sub{part.Header.Get("Content-ID"), req})
	}
	if len(subs) == 0 || len(subs) > maxBatch {
		blobError(w, 400, "InvalidInput", fmt.Sprintf("a batch holds 1 to %d sub-requests, got %d", maxBatch, len(subs)))
		return
	}
	b.mu.Lock()
	_, stamp := b.tick()
	boundary := "batchresponse_" + strings.NewReplacer(":", "", ".", "", "-", "").Replace(stamp)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.SetBoundary(boundary)
	for _, s := range subs {
		rec := httptest.NewRecorder()
		parts := strings.SplitN(strings.TrimPrefix(s.req.URL.Path, "/"), "/", 3)
		switch {
		case s.req.Method != http.MethodDelete:
			blobError(rec, 400, "InvalidInput", "the stand-in plays Delete Blob sub-requests only")
		case len(parts) < 3 || parts[0] != account || !authorized(s.req, account, acct.keys):
			blobError(rec, 403, "AuthenticationFailed", "Server failed to authenticate the sub-request.")
		default:
			b.requests = append(b.requests, BlobRequest{Method: s.req.Method, Account: account, Path: s.req.URL.Path, Query: s.req.URL.Query(), Batch: true})
			b.serveLocked(rec, s.req, acct, parts[1], parts[2])
		}
		hdr := textproto.MIMEHeader{"Content-Type": {"application/http"}, "Content-ID": {s.id}}
		pw, _ := mw.CreatePart(hdr)
		res := rec.Result()
		resBody, _ := io.ReadAll(res.Body)
		fmt.Fprintf(pw, "HTTP/1.1 %d %s\r\n", res.StatusCode, http.StatusText(res.StatusCode))
		res.Header.Set("Content-Length", strconv.Itoa(len(resBody)))
		_ = res.Header.Write(pw)
		fmt.Fprint(pw, "\r\n")
		_, _ = pw.Write(resBody)
	}
	b.mu.Unlock()
	_ = mw.Close()
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+boundary)
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(body.Bytes())
}
