// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"strings"
	"testing"
)

// Names S3 accepts must pass: the rules refuse exactly what S3 refuses, nothing more (the names
// it refuses are in badinput_test.go, against MinIO).
func TestValidBucketNamesPass(t *testing.T) {
	for _, name := range []string{
		"abc", strings.Repeat("a", 63), "my.backup.bucket", "1.2.3", "1234.1.1.1", "1.2.3.4.5", "0backup9",
		"a-b", "a--b", "geb-test-1-2", "7c0e8b9a-5d1f-4c2e-9b6a-3f4d2e1c0b9a", "xn-backup", "backup-s3alia", "backup-ol-s3",
	} {
		if rule := bucketNameRule(name); rule != "" {
			t.Errorf("%q is a valid S3 bucket name, refused: %s", name, rule)
		}
	}
}
