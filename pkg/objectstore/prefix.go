// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"fmt"
	"regexp"
	"strings"
)

// Prefix is a validated deletion scope. Its zero value is invalid and every engine entry point
// refuses it, so that no code path can delete "everything" by accident: an entry's scope comes
// only from EntryPrefix (a shoot's) or NestedPrefix (the garden's, see
// backupentry.Locate), and the whole bucket only from WholeBucket, which bucket deletion alone
// uses.
type Prefix struct {
	value string
	whole bool
}

// sourcePrefix is the name prefix of the second entry gardener creates during control plane
// migration; it shares the shoot's backups.
const sourcePrefix = "source-"

// entryNameRe is a DNS subdomain (the names Kubernetes allows for a BackupEntry) with no dots,
// which gardener's entry names never contain and which would make keys ambiguous.
var entryNameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// EntryPrefix returns the prefix `<entry name without "source-">/` that holds one shoot's
// backups. It refuses an empty or malformed name: such a name must never widen the scope.
func EntryPrefix(entryName string) (Prefix, error) {
	name := strings.TrimPrefix(entryName, sourcePrefix)
	if name == "" || len(name) > 253 || !entryNameRe.MatchString(name) {
		return Prefix{}, fmt.Errorf("%w: backup entry name %q does not give a valid, non-empty prefix", ErrInvalidConfig, entryName)
	}
	return Prefix{value: name + "/"}, nil
}

// segmentRe is one segment of a nested prefix's path: the characters a key segment may safely
// hold in every store here, "." and ".." excluded below (a store or a tool may resolve them).
var segmentRe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// NestedPrefix returns the prefix `<p>/` of backups that are not under an entry's own name: p
// is the store prefix an etcd's own directory is below, such as the garden's
// `[<path>/]virtual-garden-etcd-main` (its etcd writes `<p>/etcd-main/v2/...`). p is one or more
// segments joined by "/", none empty (no leading, trailing or doubled slash), none "." or "..",
// each of letters, digits, ".", "_" and "-". Anything else is refused: it must never widen the
// scope or make it ambiguous.
func NestedPrefix(p string) (Prefix, error) {
	if len(p) > 1024 || !validPath(p) {
		return Prefix{}, fmt.Errorf("%w: %q does not give a valid prefix (empty, \".\" or \"..\" segments, a leading or trailing slash, or characters other than letters, digits, \".\", \"_\" and \"-\")", ErrInvalidConfig, p)
	}
	return Prefix{value: p + "/"}, nil
}

// validPath reports whether every "/"-separated segment of path is a valid segment.
func validPath(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." || !segmentRe.MatchString(seg) {
			return false
		}
	}
	return true
}

// WholeBucket is the scope of a bucket's deletion: every object in it.
func WholeBucket() Prefix { return Prefix{whole: true} }

// String returns the key prefix ("" for the whole bucket).
func (p Prefix) String() string { return p.value }

// IsWholeBucket reports whether p is the whole bucket.
func (p Prefix) IsWholeBucket() bool { return p.whole }

// Validate refuses the zero Prefix and anything not made by EntryPrefix, NestedPrefix or
// WholeBucket.
func (p Prefix) Validate() error {
	switch {
	case p.whole && p.value == "":
		return nil
	case !p.whole && strings.HasSuffix(p.value, "/") && validPath(strings.TrimSuffix(p.value, "/")):
		return nil
	default:
		return fmt.Errorf("%w: refusing to delete with an empty or malformed prefix %q", ErrInvalidConfig, p.value)
	}
}

// Contains reports whether key lies inside the scope.
func (p Prefix) Contains(key string) bool {
	if p.whole {
		return true
	}
	return p.value != "" && strings.HasPrefix(key, p.value)
}
