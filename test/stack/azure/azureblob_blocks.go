// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"encoding/xml"
	"io"
	"net/http"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The blob stand-in's staged uploads: Put Block and Put Block List, as the azblob SDK's
// StageBlock and CommitBlockList send them (etcd-backup-restore uploads every snapshot so).

// maxBlockIDLength is Azure's limit of a block ID before base64 (64 bytes, so 88 characters
// encoded); the stand-in checks the encoded length only.
const maxBlockIDLength = 88

func (b *BlobStandIn) putBlock(w http.ResponseWriter, r *http.Request, c *blobContainer, name string) {
	id := r.URL.Query().Get("blockid")
	if id == "" || len(id) > maxBlockIDLength {
		blobError(w, 400, "InvalidQueryParameterValue", "blockid must be given, at most 64 bytes base64-encoded")
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		blobError(w, 400, "InvalidInput", err.Error())
		return
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
	b.write(rec, acct, c, name, data)
	if rec.Status == 201 {
		delete(c.staged, name)
	}
}
