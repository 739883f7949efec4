package objectstore

import (
	"fmt"
	"regexp"
	"strings"
)

// Prefix is a validated deletion scope. Its zero value is invalid and every engine entry point
// refuses it, so that no code path can delete "everything" by accident: an entry's scope comes
// only from EntryPrefix, and the whole bucket only from WholeBucket, which bucket deletion alone
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

// WholeBucket is the scope of a bucket's deletion: every object in it.
func WholeBucket() Prefix { return Prefix{whole: true} }

// String returns the key prefix ("" for the whole bucket).
func (p Prefix) String() string { return p.value }

// IsWholeBucket reports whether p is the whole bucket.
func (p Prefix) IsWholeBucket() bool { return p.whole }

// Validate refuses the zero Prefix and anything not made by EntryPrefix or WholeBucket.
func (p Prefix) Validate() error {
	switch {
	case p.whole && p.value == "":
		return nil
	case !p.whole && p.value != "" && strings.HasSuffix(p.value, "/") && !strings.Contains(strings.TrimSuffix(p.value, "/"), "/"):
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
