// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo_test

import (
	"slices"
	"testing"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
)

func TestPlacesRecordedBy(t *testing.T) {
	secret := map[string]string{
		entryinfo.AnnotationEntryOf:         "e",
		entryinfo.AnnotationEntryCredential: "k3",
		entryinfo.AnnotationEntryIssuer:     "X",
		entryinfo.AnnotationEntryIssuedIn:   "new",
		entryinfo.AnnotationEntryUnrevoked:  `[{"ID":"k1","Issuer":"X","IssuedIn":"old"},{"ID":"k0","Issuer":"Y","IssuedIn":"y"}]`,
		entryinfo.AnnotationEntryRetiring:   `{"ID":"k2","Issuer":"X","IssuedIn":"new","Until":"2026-01-01T00:00:00Z"}`,
	}
	entry := map[string]string{entryinfo.AnnotationEntryCredentialIssuers: `[{"ID":"k9","Issuer":"Z","IssuedIn":"z"}]`}
	want := []entryinfo.IssuerPlace{{Issuer: "X", Place: "new"}, {Issuer: "X", Place: "old"}, {Issuer: "Y", Place: "y"}, {Issuer: "Z", Place: "z"}}
	if got := entryinfo.PlacesRecordedBy("e", entry, secret); !slices.Equal(got, want) {
		t.Fatalf("PlacesRecordedBy = %v; want %v", got, want)
	}
	// Another entry's records (one of the same shoot namespace) are not e's.
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 0 {
		t.Fatalf("another entry's records = %v; want none", got)
	}
	// A record written before it named its entry: the secret's last writer's.
	delete(secret, entryinfo.AnnotationEntryOf)
	secret[genericactuator.AnnotationKeyCreatedByBackupEntry] = "f"
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 3 {
		t.Fatalf("the last writer's records = %v; want 3", got)
	}
}
