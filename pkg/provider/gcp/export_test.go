// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// WithConfig is the management plane of d (a data plane of this package) with the bucket config
// cfg (nil: the defaults) and the same clients, so that a test converges one bucket to several
// configs with one set of credentials, as the bucket controller's successive reconciles do with
// management planes built by NewManagement.
func WithConfig(d objectstore.DataPlane, cfg *gcpapi.BackupBucketConfig) objectstore.Management {
	if cfg == nil {
		cfg = &gcpapi.BackupBucketConfig{}
	}
	return &management{store: d.(*store), cfg: cfg}
}

// IsServiceAccountKeyIssuer says whether iss is the issuer of per-bucket service-account keys.
func IsServiceAccountKeyIssuer(iss objectstore.CredentialIssuer) bool {
	_, ok := iss.(*iamIssuer)
	return ok
}

// SetStreamChunkSize lowers the chunk of a streamed write for a test (a resumable upload of
// several chunks of a small object) and returns what puts it back.
func SetStreamChunkSize(n int) (restore func()) {
	old := streamChunkSize
	streamChunkSize = n
	return func() { streamChunkSize = old }
}
