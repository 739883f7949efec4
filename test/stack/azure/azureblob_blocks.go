// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The blob stand-in's staged uploads: Put Block (from the body, or from a URL as StageBlockFromURL
// sends it) and Put Block List, as the azblob SDK's StageBlock and CommitBlockList send them
// (etcd-backup-restore uploads every snapshot so; the extension's server-side copy stages from a
// URL).

// maxBlockIDLength is Azure's limit of a block ID before base64 (64 bytes, so 88 characters
// encoded); the stand-in checks the encoded length only.
const maxBlockIDLength = 88

func (b *BlobStandIn) putBlock(w http.ResponseWriter, r *http.Request, c *blobContainer, name string) {
	id := r.URL.Query().Get("blockid")
	if id == "" || len(id) > maxBlockIDLength {
		blobError(w, 400, "InvalidQueryParameterValue", "blockid must be given, at most 64 bytes base64-encoded")
		return
	}
	var data []byte
	if source := r.Header.Get("x-ms-copy-source"); source != "" {
		var ok bool
		if data, ok = b.blockFromURL(w, r, source); !ok {
			return
		}
	} else {
		var err error
		if data, err = io.ReadAll(r.Body); err != nil {
			blobError(w, 400, "InvalidInput", err.Error())
			return
		}
	}
	if c.staged == nil {
		c.staged = map[string]map[string][]byte{}
	}
	if c.staged[name] == nil {
		c.staged[name] = map[string][]byte{}
	}
	c.staged[name][id] = data
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
}

// blockList is Put Block List's body: the blocks in order, each by where it is looked up.
type blockList struct {
	XMLName xml.Name `xml:"BlockList"`
	Blocks  []struct {
		XMLName xml.Name
		ID      string `xml:",chardata"`
	} `xml:",any"`
}

func (b *BlobStandIn) putBlockList(w http.ResponseWriter, r *http.Request, acct *blobAccount, c *blobContainer, name string) {
	var list blockList
	if err := xml.NewDecoder(r.Body).Decode(&list); err != nil {
		blobError(w, 400, "InvalidXmlDocument", err.Error())
		return
	}
	staged := c.staged[name]
	var data []byte
	for _, blk := range list.Blocks {
		switch blk.XMLName.Local {
		case "Latest", "Uncommitted":
		default:
			blobError(w, 400, "InvalidXmlNodeValue", "the stand-in commits staged blocks only (Latest, Uncommitted), not "+blk.XMLName.Local)
			return
		}
		part, ok := staged[blk.ID]
		if !ok {
			blobError(w, 400, "InvalidBlockList", "The specified block list is invalid: block "+blk.ID+" is not staged.")
			return
		}
		data = append(data, part...)
	}
	// Azure discards a blob's uncommitted blocks once a block list is committed; a refused
	// commit keeps them.
	rec := &stack.StatusRecorder{ResponseWriter: w}
	b.write(rec, r, acct, c, name, data)
	if rec.Status == 201 {
		delete(c.staged, name)
	}
}

// blockFromURL is the source range of Put Block From URL (x-ms-copy-source): a blob of this
// stand-in, path-style, read with a SAS. The stand-in checks that the SAS grants read (sp has r)
// and carries a signature, not the signature itself. It plays x-ms-source-if-match and
// x-ms-source-range ("bytes=<first>-<last>"); a failed condition is 412 CannotVerifyCopySource
// and a missing source 404 CannotVerifyCopySource, as Azure answers them.
func (b *BlobStandIn) blockFromURL(w http.ResponseWriter, r *http.Request, source string) ([]byte, bool) {
	u, err := url.Parse(source)
	if err != nil {
		blobError(w, 400, "InvalidHeaderValue", "x-ms-copy-source: "+err.Error())
		return nil, false
	}
	if q := u.Query(); q.Get("sig") == "" || !strings.Contains(q.Get("sp"), "r") {
		blobError(w, 403, "CannotVerifyCopySource", "Server failed to authenticate the request.")
		return nil, false
	}
	parts := strings.SplitN(strings.TrimPrefix(u.Path, "/"), "/", 3)
	var v *blobVersion
	if len(parts) == 3 {
		if acct := b.accounts[parts[0]]; acct != nil {
			if c := acct.containers[parts[1]]; c != nil && c.blobs[parts[2]] != nil {
				v = c.blobs[parts[2]].current
			}
		}
	}
	if v == nil {
		blobError(w, 404, "CannotVerifyCopySource", "The specified blob does not exist.")
		return nil, false
	}
	if match := r.Header.Get("x-ms-source-if-match"); match != "" && match != v.etag() {
		blobError(w, 412, "CannotVerifyCopySource", "The condition specified using HTTP conditional header(s) is not met.")
		return nil, false
	}
	data := v.data
	if rng := r.Header.Get("x-ms-source-range"); rng != "" {
		var first, last int
		if _, err := fmt.Sscanf(rng, "bytes=%d-%d", &first, &last); err != nil || first > last || last >= len(data) {
			blobError(w, 416, "InvalidRange", "The range specified is invalid for the current size of the resource.")
			return nil, false
		}
		data = data[first : last+1]
	}
	return slices.Clone(data), true
}
