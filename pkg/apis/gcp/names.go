// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"fmt"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/validation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// bucketNameSubject says where a bucket name comes from, for the messages.
const bucketNameSubject = "the BackupBucket's name, which its BackupEntries carry as spec.bucketName"

// lookalikes are the digits GCS's "close misspellings" of "google" are made of most often
// (g00gle, goog1e, g0ogle); they are read as the letters they stand for before "google" is
// looked for.
var lookalikes = strings.NewReplacer("0", "o", "1", "l", "3", "e")

// ValidateBucketName checks GCS's bucket naming rules before any request, so that a name GCS
// would refuse (or, for a read, answer 400 or 404 without saying why) is reported with the rule
// it breaks and nothing is sent.
func ValidateBucketName(name string) error {
	if rule := bucketNameRule(name); rule != "" {
		return objectstore.Invalidf("bucket name %q (%s) breaks GCS's bucket naming rules: %s", name, bucketNameSubject, rule)
	}
	return nil
}

func bucketNameRule(name string) string {
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' && r != '_' {
			return fmt.Sprintf("only lowercase letters, digits, dashes, underscores and dots are allowed, not %q", r)
		}
	}
	if len(name) < 3 {
		return fmt.Sprintf("it must be 3 to 63 characters long (up to 222 with dots), not %d", len(name))
	}
	if !validation.LowerAlnum(name[0]) {
		return "it must begin with a lowercase letter or a digit"
	}
	if !validation.LowerAlnum(name[len(name)-1]) {
		return "it must end with a lowercase letter or a digit"
	}
	if strings.Contains(name, ".") {
		if len(name) > 222 {
			return fmt.Sprintf("a name with dots must be 3 to 222 characters long, not %d", len(name))
		}
		for _, part := range strings.Split(name, ".") {
			if len(part) == 0 || len(part) > 63 {
				return fmt.Sprintf("each dot-separated part must be 1 to 63 characters long, not %d", len(part))
			}
		}
	} else if len(name) > 63 {
		return fmt.Sprintf("it must be 3 to 63 characters long (up to 222 with dots), not %d", len(name))
	}
	if validation.IPv4Like(name) {
		return "it must not be an IP address in dotted-decimal notation"
	}
	if strings.HasPrefix(name, "goog") {
		return `it must not begin with "goog"`
	}
	if strings.Contains(lookalikes.Replace(name), "google") {
		return `it must not contain "google" or a close misspelling of it`
	}
	return ""
}
