// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect_test

import (
	"errors"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// otherMem is a store of another type than controllertest's "mem".
type otherMem struct{ controllertest.Provider }

func (otherMem) Type() string { return "mem2" }

// TestCopyPlaceOfAnotherType: the copy's place carries copy.type's provider, and a copy bucket
// named as the primary is the primary only in a store of the primary's type.
func TestCopyPlaceOfAnotherType(t *testing.T) {
	seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seeded.SetCopyStores(provider.Register(otherMem{}))
	for _, c := range []struct {
		typ, wantType string
		isPrimary     bool
	}{{"", "mem", true}, {"mem", "mem", true}, {"mem2", "mem2", false}} {
		cfg, err := seeded.Decode(controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: c.typ, CredentialsRef: "c", BucketName: "primary"}}}).Raw)
		if err != nil {
			t.Fatal(err)
		}
		place, err := connect.CopyPlaceOf(seeded, cfg, "primary")
		if err != nil {
			t.Fatalf("type %q: %v", c.typ, err)
		}
		if place.Provider.Type() != c.wantType || place.IsBucket("primary") != c.isPrimary || place.IsBucket("other") {
			t.Errorf("type %q: provider %s, IsBucket(primary) %t; want %s, %t", c.typ, place.Provider.Type(), place.IsBucket("primary"), c.wantType, c.isPrimary)
		}
	}
	cfg, err := seeded.Decode(controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: "ibm", CredentialsRef: "c"}}}).Raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connect.CopyPlaceOf(seeded, cfg, "primary"); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("a type without a copy store: %v; want ErrInvalidConfig", err)
	}
}
