// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider

// Unseeded is p without the seed configuration: its Decode reads a providerConfig alone. A
// second store's own providerConfig (copy.providerConfig) is decoded with it: the seed
// configuration in force, which declares the copy, is the primary's and is not merged into it.
// Plane constructors still wait while the seed configuration is awaited: no copy is managed with
// the defaults.
func Unseeded(p Provider) Provider {
	if s, ok := p.(*Seeded); ok {
		return unseeded{s}
	}
	return p
}

// unseeded decodes with the Seeded's provider and builds planes through the Seeded.
type unseeded struct{ *Seeded }

func (u unseeded) Decode(raw []byte) (Config, error) {
	if st := u.state.Load(); st.pending != nil {
		cfg, _ := u.Provider.Decode(nil)
		return cfg.failing(st.pending), st.pending
	}
	return u.Provider.Decode(raw)
}
