// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package memstore

// Unlock lifts the retention lock or legal hold of an object (as a governance-mode retention
// can be lifted), so that tests need not wait for a lock to expire.
func (s *Store) Unlock(bucketName, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[bucketName]; ok {
		delete(b.locks, key)
	}
}
