// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"fmt"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// BucketNameSubject says where a container name comes from, for the messages.
const BucketNameSubject = "the BackupBucket's name, which its BackupEntries carry as spec.bucketName"

// ValidateBucketName checks Azure's naming rules for blob containers before any request, so
// that a name Azure would refuse (InvalidResourceName, or a 400 without a code on HEAD) is
// reported with the rule it breaks. The bucket's name is also its resource group's name (1-90
// letters, digits, '-', '_', '.', '(' and ')'), which every valid container name is; its storage
// account's name is derived ("bkp" and 21 hex digits, see the provider's AccountName) and always
// valid.
func ValidateBucketName(name string) error {
	if rule := ContainerNameRule(name); rule != "" {
		return objectstore.Invalidf("container name %q (%s) breaks Azure's container naming rules: %s", name, BucketNameSubject, rule)
	}
	return nil
}

// ContainerNameRule returns the container naming rule name breaks, or "" for a valid name.
func ContainerNameRule(name string) string {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Sprintf("it must be 3 to 63 characters long, not %d", len(name))
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return fmt.Sprintf("only lowercase letters, digits and dashes are allowed, not %q", r)
		}
	}
	switch {
	case name[0] == '-':
		return "it must begin with a lowercase letter or a digit"
	case name[len(name)-1] == '-':
		return "it must not end with a dash"
	case strings.Contains(name, "--"):
		return "it must not contain two consecutive dashes"
	}
	return ""
}
