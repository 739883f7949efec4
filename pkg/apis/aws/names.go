// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"fmt"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/validation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// bucketNameSubject says where a bucket name comes from, for the messages.
const bucketNameSubject = "the BackupBucket's name, which its BackupEntries carry as spec.bucketName"

// reservedPrefixes and reservedSuffixes are S3's reserved name parts for general purpose buckets
// (access point aliases, Object Lambda, Multi-Region Access Points, directory and table buckets).
var (
	reservedPrefixes = []string{"xn--", "sthree-", "amzn-s3-demo-"}
	reservedSuffixes = []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"}
)

// ValidateBucketName checks S3's naming rules for general purpose buckets before any request, so
// that a name S3 would refuse (with a HEAD answering 400 and no code) is reported with the rule it
// breaks. The rules are AWS's; they hold for S3-compatible stores too, so that a bucket name works
// wherever etcd-backup-restore is pointed.
func ValidateBucketName(name string) error {
	if rule := bucketNameRule(name); rule != "" {
		return objectstore.Invalidf("bucket name %q (%s) breaks S3's bucket naming rules: %s", name, bucketNameSubject, rule)
	}
	return nil
}

func bucketNameRule(name string) string {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Sprintf("it must be 3 to 63 characters long, not %d", len(name))
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' {
			return fmt.Sprintf("only lowercase letters, digits, dots and dashes are allowed, not %q", r)
		}
	}
	if !validation.LowerAlnum(name[0]) {
		return "it must begin with a lowercase letter or a digit"
	}
	if !validation.LowerAlnum(name[len(name)-1]) {
		return "it must end with a lowercase letter or a digit"
	}
	if strings.Contains(name, "..") {
		return "it must not contain two adjacent dots"
	}
	if validation.IPv4Like(name) {
		return "it must not be formatted as an IP address"
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("the prefix %q is reserved", p)
		}
	}
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(name, s) {
			return fmt.Sprintf("the suffix %q is reserved", s)
		}
	}
	return ""
}
