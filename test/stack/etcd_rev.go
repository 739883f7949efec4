// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"strconv"
	"strings"
	"testing"
)

// PutRev writes key and returns the revision etcd gave the write, for a test that waits until
// a snapshot covers it (SnapshotEndRevision).
func (e *Etcd) PutRev(t testing.TB, key, value string) int64 {
	t.Helper()
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	e.Call(t, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(value)}, &out)
	rev, err := strconv.ParseInt(out.Header.Revision, 10, 64)
	if err != nil {
		t.Fatalf("etcd put %s: revision %q: %v", key, out.Header.Revision, err)
	}
	return rev
}

// SnapshotEndRevision is the last etcd revision a snapshot of etcd-backup-restore holds, read from
// its object name ("<prefix>/v2/Full-<start>-<end>-<unix time>" or "Incr-..."; a compressed
// snapshot has a suffix after the time); ok is false for any other name.
func SnapshotEndRevision(key string) (rev int64, full, ok bool) {
	parts := strings.Split(key[strings.LastIndex(key, "/")+1:], "-")
	if len(parts) != 4 || (parts[0] != "Full" && parts[0] != "Incr") {
		return 0, false, false
	}
	rev, err := strconv.ParseInt(parts[2], 10, 64)
	return rev, parts[0] == "Full", err == nil
}
