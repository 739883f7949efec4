// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

func TestAMissingHookMustBeDeclaredUnsupported(t *testing.T) {
	store := memstore.New(10)
	full := Harness{
		Store:          StoresOf(store),
		BadCredentials: StoresOf(store),
		ForeignBucket:  func(*testing.T) string { return "taken" },
		OtherRegion:    "elsewhere",
		Versioning:     store.SetVersioning,
		Lock:           func(context.Context, string, string, time.Time) error { return nil },
		DeferralCovers: func(context.Context, string, string) error { return nil },
		MarkExcluded:   store.MarkExcluded,
	}
	without := func(change func(*Harness)) Harness {
		h := full
		change(&h)
		return h
	}
	cases := []struct {
		name    string
		h       Harness
		wantErr string // empty: consistent
	}{
		{"every hook set", full, ""},
		{"a hook missing, declared", without(func(h *Harness) { h.Lock = nil; h.Unsupported = []Feature{Locks} }), ""},
		{"a hook missing, not declared", without(func(h *Harness) { h.Versioning = nil }), "sets no hook for feature Versions"},
		{"region missing, not declared", without(func(h *Harness) { h.OtherRegion = "" }), "sets no hook for feature Regions"},
		{"a hook set and declared unsupported", without(func(h *Harness) { h.Unsupported = []Feature{DeferralReadBack} }), "sets the hook of feature DeferralReadBack and declares it unsupported"},
		{"deferral declared unsupported, read-back not", without(func(h *Harness) { h.Unsupported = []Feature{Deferral} }), "declares Deferral unsupported but not DeferralReadBack"},
		{"deferral and read-back declared unsupported", without(func(h *Harness) { h.DeferralCovers = nil; h.Unsupported = []Feature{Deferral, DeferralReadBack} }), ""},
		{"deferral supported, read-back not", without(func(h *Harness) { h.DeferralCovers = nil; h.Unsupported = []Feature{DeferralReadBack} }), ""},
		{"an unknown feature", without(func(h *Harness) { h.Unsupported = []Feature{"Teleport"} }), `unknown feature "Teleport"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.h.featureMismatch()
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("featureMismatch = %v; want none", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("featureMismatch = %v; want %q", err, c.wantErr)
			}
		})
	}
}
