// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Location implements objectstore.CredentialIssuer: the Keystone (auth URL), user and project of
// the operator's session. Application credentials belong to that user: another user (or
// Keystone) neither sees nor deletes them.
func (s *keystoneIssuer) Location(ctx context.Context) (string, error) {
	idc, user, err := s.identity(ctx)
	if err != nil {
		return "", err
	}
	if user == "" {
		return "", objectstore.Invalidf("Keystone did not say which user the operator's credentials authenticate (keys %s)", s.store.creds.keys)
	}
	project := ""
	s.store.mu.Lock()
	result, ok := s.store.session.GetAuthResult().(tokens.CreateResult)
	s.store.mu.Unlock()
	if ok {
		if p, err := result.ExtractProject(); err == nil && p != nil {
			project = p.ID
		}
	}
	return "keystone:" + idc.Endpoint + " user:" + user + " project:" + project, nil
}
