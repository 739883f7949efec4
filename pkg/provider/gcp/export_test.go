package gcp

import (
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// WithConfig is s (a store of this package) with the bucket config cfg and the same clients, so
// that a test converges one bucket to several configs with one store's credentials, as the
// bucket controller's successive reconciles do with stores built by NewStore.
func WithConfig(s objectstore.Store, cfg *gcpapi.BackupBucketConfig) objectstore.Store {
	c := *s.(*store)
	c.cfg = cfg
	return &c
}

// IsServiceAccountKeyIssuer says whether iss is the issuer of per-bucket service-account keys.
func IsServiceAccountKeyIssuer(iss objectstore.CredentialIssuer) bool {
	_, ok := iss.(*iamIssuer)
	return ok
}
