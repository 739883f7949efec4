// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import "testing"

func TestSnapshotEndRevision(t *testing.T) {
	for _, c := range []struct {
		key  string
		rev  int64
		full bool
		ok   bool
	}{
		{"shoot--p--s--u/etcd-main/v2/Full-00000000-00000012-1764070000", 12, true, true},
		{"shoot--p--s--u/etcd-main/v2/Incr-00000013-00000015-1764070001", 15, false, true},
		{"shoot--p--s--u/etcd-main/v2/Full-00000000-00000020-1764070002.gz.final", 20, true, true},
		{"shoot--p--s--u/etcd-main/v2/Full-00000000-00000020-1764070002/0000000001", 0, false, false}, // a chunk
		{"shoot--p--s--u/etcd-main/v2/Full-00000000-1764070002", 0, false, false},
		{"shoot--p--s--u/etcd-main/v2/Other-00000000-00000020-1764070002", 0, false, false},
	} {
		rev, full, ok := SnapshotEndRevision(c.key)
		if rev != c.rev || full != c.full || ok != c.ok {
			t.Errorf("SnapshotEndRevision(%q) = %d, %t, %t; want %d, %t, %t", c.key, rev, full, ok, c.rev, c.full, c.ok)
		}
	}
}
