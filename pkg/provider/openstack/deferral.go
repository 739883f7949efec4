// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"fmt"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DeferDeletion implements objectstore.Management: Swift has no retention locks, so nothing is ever
// left to defer.
func (s *management) DeferDeletion(context.Context, string, string) (objectstore.Deferral, error) {
	return objectstore.Deferral{}, fmt.Errorf("deferring deletions: %w", objectstore.ErrUnsupported)
}
