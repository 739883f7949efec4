// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"fmt"
	"maps"
	"sync/atomic"
	"time"
)

var nameSeq atomic.Int64

// NewBucketName returns a fresh bucket name, valid on every store (lowercase, digits, dashes).
func NewBucketName() string {
	return fmt.Sprintf("geb-test-%d-%d", time.Now().UnixNano()%1_000_000, nameSeq.Add(1))
}

// With returns a copy of secret data with the given key/value pairs set; an empty value
// removes the key.
func With(data map[string][]byte, kv ...string) map[string][]byte {
	out := maps.Clone(data)
	if out == nil {
		out = map[string][]byte{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = []byte(kv[i+1])
	}
	return out
}
