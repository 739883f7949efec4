// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// otherCloud is a store of another type than recordingCloud's "test".
type otherCloud struct{ recordingCloud }

func (otherCloud) Type() string { return "other" }

// TestCopyStore: a copy of the primary's type is written with the primary's provider, one of
// another type with that type's copy store (its config reaching that store's management); both
// wait while the seed configuration is awaited; a type the binary has no store of is a
// configuration problem naming the types it has.
func TestCopyStore(t *testing.T) {
	var gotPrimary, gotOther *testConfig
	seeded, err := provider.WithSeedConfig(provider.Register(recordingCloud{&gotPrimary}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seeded.SetCopyStores(provider.Register(otherCloud{recordingCloud{&gotOther}}), provider.Register(recordingCloud{&gotOther}))
	ctx := context.Background()
	for _, c := range []struct {
		typ      string
		wantType string
		got      **testConfig
	}{{"", "test", &gotPrimary}, {"test", "test", &gotPrimary}, {"other", "other", &gotOther}} {
		p, err := provider.CopyStore(seeded, c.typ)
		if err != nil {
			t.Fatalf("CopyStore(%q): %v", c.typ, err)
		}
		if p.Type() != c.wantType {
			t.Errorf("CopyStore(%q).Type() = %q; want %q", c.typ, p.Type(), c.wantType)
		}
		cfg, err := p.Decode([]byte("copy-issuer"))
		if err != nil {
			t.Fatal(err)
		}
		gotPrimary, gotOther = nil, nil
		if _, err := cfg.NewManagement(ctx, provider.Credentials{}); err != nil {
			t.Fatal(err)
		}
		if *c.got == nil || (*c.got).Issuer != "copy-issuer" {
			t.Errorf("CopyStore(%q): the management was built by another store or with the seed configuration: %+v", c.typ, *c.got)
		}
	}

	_, err = provider.CopyStore(seeded, "ibm")
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `copy.type "ibm"`) || !strings.Contains(err.Error(), "other, test") {
		t.Errorf("CopyStore(ibm): %v; want ErrInvalidConfig naming the types other, test", err)
	}
	if _, err := provider.CopyStore(provider.Register(recordingCloud{&gotPrimary}), "other"); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("CopyStore of a provider without copy stores: %v; want ErrInvalidConfig", err)
	}

	seeded.Await("not yet")
	other, err := provider.CopyStore(seeded, "other")
	if err != nil {
		t.Fatal(err)
	}
	var pending *provider.SeedConfigPendingError
	if _, err := other.Decode(nil); !errors.As(err, &pending) {
		t.Errorf("Decode while awaited: %v; want the wait's error", err)
	}
	if _, err := other.NewDataPlane(ctx, provider.Credentials{}); !errors.As(err, &pending) {
		t.Errorf("NewDataPlane while awaited: %v; want the wait's error", err)
	}
}
