// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// SetCopyStores makes stores the providers a copy of another type than the Seeded's own is
// written with (copy.type), by their Type. A store of the Seeded's own type is not used: the
// copy of the same type is written with the Seeded's provider, whose flags are bound. It is set
// once, before any controller runs (pkg/app), and never changed.
func (s *Seeded) SetCopyStores(stores ...Provider) {
	s.copyStores = map[string]Provider{}
	for _, p := range stores {
		if p.Type() != s.Type() {
			s.copyStores[p.Type()] = p
		}
	}
}

// CopyStore is the provider a copy of type typ (copy.type; empty: p's own) is written with,
// without the seed configuration (Unseeded): its Decode reads the copy's own providerConfig alone,
// and its plane constructors wait while p's seed configuration is awaited, as p's. A type p's
// binary writes no copy of is an error wrapping objectstore.ErrInvalidConfig that names the types
// it does.
func CopyStore(p Provider, typ string) (Provider, error) {
	if typ == "" || typ == p.Type() {
		return Unseeded(p), nil
	}
	s, ok := p.(*Seeded)
	if ok {
		if other, ok := s.copyStores[typ]; ok {
			return unseeded{Seeded: s, store: other}, nil
		}
	}
	types := []string{p.Type()}
	if s != nil {
		for t := range s.copyStores {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	return nil, fmt.Errorf("%w: copy.type %q: this binary writes copies of the types %s only", objectstore.ErrInvalidConfig, typ, strings.Join(types, ", "))
}
