// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"fmt"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DeferDeletion implements objectstore.Management: a directory holds no retention locks, so no
// object ever needs a deferred deletion.
func (m *management) DeferDeletion(context.Context, string, string) (objectstore.Deferral, error) {
	return objectstore.Deferral{}, fmt.Errorf("%w: a local directory has no retention locks and no lifecycle to defer a deletion to", objectstore.ErrUnsupported)
}
