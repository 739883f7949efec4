// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// MaxBucketNameLength is the longest file name Linux filesystems take (NAME_MAX, in bytes).
const MaxBucketNameLength = 255

// ValidateBucketName checks that a bucket name is one directory name directly under the root:
// no separator, nothing that climbs out, nothing hidden (the provider keeps its own files under
// names that start with a dot).
func ValidateBucketName(name string) error {
	if rule := BucketNameRule(name); rule != "" {
		return objectstore.Invalidf("bucket name %q (the BackupBucket's name, which its BackupEntries carry as spec.bucketName) breaks the local directory naming rules: %s", name, rule)
	}
	return nil
}

// BucketNameRule is the naming rule name breaks, or "" if it breaks none.
func BucketNameRule(name string) string {
	switch {
	case name == "":
		return "it must not be empty"
	case len(name) > MaxBucketNameLength:
		return fmt.Sprintf("it must be at most %d bytes long, not %d", MaxBucketNameLength, len(name))
	case strings.ContainsAny(name, "/\\"):
		return `it must not contain "/" or "\"`
	case strings.HasPrefix(name, "."):
		return `it must not start with "." (hidden names are the provider's own files)`
	case !utf8.ValidString(name):
		return "it must be valid UTF-8"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "it must not contain control characters"
	}
	return ""
}
