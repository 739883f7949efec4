// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import "context"

// Location implements objectstore.CredentialIssuer: the project of the operator's credentials,
// where the buckets' service accounts and their keys live.
func (s *iamIssuer) Location(context.Context) (string, error) {
	return "gcp-project:" + s.projectID, nil
}
