// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// SourceFor returns the read-only view of the store an entry's drill reads, with the entry's own
// credentials (its spec.secretRef) and region. It is the one place the drill reaches the store.
type SourceFor func(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (drill.Source, error)

// StoreSource is SourceFor over the provider's data plane, built as every controller builds it
// (connect.NewDataPlane: the secret read from the API server, never cached). The drill
// sees only its listing and its streaming OpenObject, so an object is never held whole in memory
// and the drill's byte budget holds while it reads.
func StoreSource(reader client.Reader, p provider.Provider) SourceFor {
	return func(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (drill.Source, error) {
		return connect.NewDataPlane(ctx, reader, p, be.Spec.SecretRef, be.Spec.Region)
	}
}
