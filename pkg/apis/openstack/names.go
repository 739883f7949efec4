// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// bucketNameSubject says where a container name comes from, for the messages.
const bucketNameSubject = "the BackupBucket's name, which its BackupEntries carry as spec.bucketName"

// MaxContainerNameLength is Swift's max_container_name_length (swift/common/constraints.py,
// advertised in /info): the API reference gives it in bytes. Swift 2.30 on Python 3 compares it
// with the name's characters, so it would accept a longer name of multi-byte characters; the
// documented limit in bytes holds on every Swift (and on Ceph's Swift API), so it is the one
// checked.
const MaxContainerNameLength = 256

// ValidateBucketName checks Swift's container naming rules before any request, so that a name
// Swift would refuse (412 or 400 without a code, or a gophercloud error without a class) is
// reported with the rule it breaks.
func ValidateBucketName(name string) error {
	if rule := ContainerNameRule(name); rule != "" {
		return objectstore.Invalidf("container name %q (%s) breaks Swift's container naming rules: %s", name, bucketNameSubject, rule)
	}
	return nil
}

// ContainerNameRule is the naming rule name breaks, or "" if it breaks none.
func ContainerNameRule(name string) string {
	switch {
	case name == "":
		return "it must not be empty"
	case len(name) > MaxContainerNameLength:
		return fmt.Sprintf("it must be at most %d bytes long, not %d", MaxContainerNameLength, len(name))
	case strings.Contains(name, "/"):
		return `it must not contain "/"`
	case !utf8.ValidString(name):
		return "it must be valid UTF-8"
	case strings.ContainsRune(name, 0):
		return "it must not contain a NUL character"
	}
	return ""
}
