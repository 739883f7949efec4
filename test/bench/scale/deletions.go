// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// deleteRequest is the body of S3's multi-object delete (POST /<bucket>?delete).
type deleteRequest struct {
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId"`
	} `xml:"Object"`
}

// recordDeletion notes the keys of a batch deletion on its way through the proxy (the proxy
// calls it before forwarding; the body is put back for MinIO).
func (b *bench) recordDeletion(r *http.Request) {
	if r.Method != http.MethodPost || !r.URL.Query().Has("delete") || r.Body == nil {
		return
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req deleteRequest
	if err == nil {
		err = xml.Unmarshal(body, &req)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.recordDeletes {
		return
	}
	b.deleteBatches++
	if err != nil {
		b.deleted["(unreadable batch) "+err.Error()]++
		return
	}
	for _, o := range req.Objects {
		b.deleted[o.Key+"\x00"+o.VersionID]++
	}
}

// deletionCheck is what phase 3 found about the batch deletions it recorded.
type deletionCheck struct {
	batches, cut, sent, unique, twice int
	wrong                             []string // keys not under a deleted entry's prefix (at most 5)
	wrongN                            int
	perEntry                          map[string]int // distinct keys sent, by deleted entry
}

// checkDeletions sorts the recorded keys: each must be under `<entry>/` of an entry in deleted.
func (b *bench) checkDeletions(deleted map[string]bool) deletionCheck {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := deletionCheck{batches: b.deleteBatches, cut: b.cutBatches, unique: len(b.deleted), perEntry: map[string]int{}}
	for k, n := range b.deleted {
		c.sent += n
		if n > 1 {
			c.twice++
		}
		key, _, _ := strings.Cut(k, "\x00")
		entry, _, ok := strings.Cut(key, "/")
		if ok && deleted[entry] {
			c.perEntry[entry]++
		}
		if !ok || !deleted[entry] {
			c.wrongN++
			if len(c.wrong) < 5 {
				c.wrong = append(c.wrong, strings.ReplaceAll(k, "\x00", " version "))
			}
		}
	}
	return c
}

// count lists prefix completely (every version) and counts the keys for which ok holds.
func (b *bench) count(ctx context.Context, prefix string, ok func(key string) bool) (int, error) {
	n := 0
	err := b.direct.ListObjects(ctx, bucketName, prefix, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if ok(o.Key) {
				n++
			}
		}
		return nil
	})
	return n, err
}

func anyKey(string) bool { return true }

// neighbours are the keys outside every entry's prefix that phase 3 writes and must find again:
// some unrelated ones, and some that share a deleted entry's name as a string prefix without
// being below `<entry>/` (a deletion by string prefix without the slash would take them). Not
// the entry's bare name itself: MinIO keeps an object as a directory of that name, and an object
// "<entry>" makes it list nothing below "<entry>/" (seen here: the entry's 501 objects vanished
// from every listing), which S3 does not do.
func neighbours() []string {
	keys := []string{entryName(0) + ".tar.gz", entryName(0) + "-x"}
	for i := range 3 {
		keys = append(keys, fmt.Sprintf("%s-sibling/object-%d", entryName(0), i))
		keys = append(keys, fmt.Sprintf("outside-any-entry/object-%d", i))
	}
	return keys
}
