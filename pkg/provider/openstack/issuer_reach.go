// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"fmt"
)

// CredentialReach says what a credential this issuer issues for bucket reaches, for the
// BackupBucket's GeneratedCredentials condition (objectstore.CredentialIssuer). It claims no more than
// Keystone and Swift enforce; the package's TestGeneratedCredentialReach drives every claim
// against the real Keystone and Swift.
//
// Access rules are checked by Swift's authtoken middleware on the client's request only. Swift's
// copy (X-Copy-From), symlink and large object (DLO, SLO) middleware make sub-requests that
// keystoneauth checks against the user's roles, which are project-wide: so a credential
// restricted to a container still reads, and through a static large object manifest delete
// deletes, objects of any container in the project's account.
func (s *keystoneIssuer) CredentialReach(bucket string) string {
	project := "the operator's project"
	if n := s.store.creds.tenantName; n != "" {
		project = fmt.Sprintf("project %q", n)
	}
	if !s.cfg.GeneratedCredentials.RestrictToContainer() {
		return fmt.Sprintf("a Keystone application credential without access rules (generatedCredentials.accessRules: false): "+
			"it can do whatever its roles allow in %s, in Swift (every container) and in every other service; "+
			"it cannot create further credentials", project)
	}
	return fmt.Sprintf("a Keystone application credential whose access rules allow requests to container %q only; "+
		"Swift does not check them on the sub-requests of server-side copy (X-Copy-From), symlinks and large objects, "+
		"so a holder can read every object, and delete every object (static large object manifest delete), "+
		"in every container of %s's Swift account; it cannot write into, list or change another container, "+
		"reach another project or another service, or create further credentials; "+
		"to confine each bucket for real, give it a project of its own", bucket, project)
}

// HeldIn implements objectstore.CredentialIssuer: the operator's secret never holds an
// application credential this issuer created.
func (s *keystoneIssuer) HeldIn(context.Context, string, map[string][]byte) ([]string, error) {
	return nil, nil
}
