// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Unseeded is p without the seed configuration: its Decode reads a providerConfig alone. A
// second store's own providerConfig (copy.providerConfig) is decoded with it: the seed
// configuration in force, which declares the copy, is the primary's and is not merged into it.
// Plane constructors still wait while the seed configuration is awaited: no copy is managed with
// the defaults.
func Unseeded(p Provider) Provider {
	if s, ok := p.(*Seeded); ok {
		return unseeded{Seeded: s, store: s.Provider}
	}
	return p
}

// unseeded decodes with store (the Seeded's own provider, or a copy store of another type:
// CopyStore) and builds planes with it, waiting while the Seeded's seed configuration is
// awaited.
type unseeded struct {
	*Seeded

	store Provider
}

func (u unseeded) Type() string { return u.store.Type() }

func (u unseeded) ValidateBucketName(name string) error { return u.store.ValidateBucketName(name) }

func (u unseeded) Flags() Flags { return u.store.Flags() }

func (u unseeded) Decode(raw []byte) (Config, error) {
	if st := u.state.Load(); st.pending != nil {
		cfg, _ := u.store.Decode(nil)
		return cfg.failing(st.pending), st.pending
	}
	return u.store.Decode(raw)
}

func (u unseeded) NewDataPlane(ctx context.Context, creds Credentials) (objectstore.DataPlane, error) {
	if st := u.state.Load(); st.pending != nil {
		return nil, st.pending
	}
	return u.store.NewDataPlane(ctx, creds)
}

func (u unseeded) EtcdBackupSecretData(entry *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if st := u.state.Load(); st.pending != nil {
		return nil, st.pending
	}
	return u.store.EtcdBackupSecretData(entry, data)
}
