// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"strings"
	"testing"
)

// Names GCS accepts must pass: underscores, dots, 222 characters with dots, digits only.
func TestValidBucketNames(t *testing.T) {
	for _, name := range []string{
		"abc", "backup_bucket", "geb-test-1", "123", strings.Repeat("a", 63),
		strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("a", 30), // 222
		"backup.example.com", "1.2.3", "1.2.3.4.5", "goo-gle", "backup-goog",
	} {
		if err := ValidateBucketName(name); err != nil {
			t.Errorf("%q (%d characters): %v", name, len(name), err)
		}
	}
}
