// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

func TestPlacesRecordedBy(t *testing.T) {
	record := entryrecord.Record{
		Entry:     "e",
		Published: &entryrecord.Credential{ID: "k3", Issuer: "X", IssuedIn: "new"},
		Unrevoked: []entryrecord.Credential{{ID: "k1", Issuer: "X", IssuedIn: "old"}, {ID: "k0", Issuer: "Y", IssuedIn: "y"}},
		Retiring:  &entryrecord.Retiring{Credential: entryrecord.Credential{ID: "k2", Issuer: "X", IssuedIn: "new"}, Until: time.Now()},
	}
	secret := map[string]string{}
	entryrecord.Write(secret, record)
	entry := map[string]string{}
	entryrecord.WriteKept(entry, entryrecord.Kept{ForDeletion: []entryrecord.Credential{{ID: "k9", Issuer: "Z", IssuedIn: "z"}}})
	want := []entryinfo.IssuerPlace{{Issuer: "X", Place: "new"}, {Issuer: "X", Place: "old"}, {Issuer: "Y", Place: "y"}, {Issuer: "Z", Place: "z"}}
	if got := entryinfo.PlacesRecordedBy("e", entry, secret); !slices.Equal(got, want) {
		t.Fatalf("PlacesRecordedBy = %v; want %v", got, want)
	}
	// The intent of a pass whose record a restart lost after gardener's write (which reset the
	// secret's annotations): its credentials are the entry's too.
	entryrecord.WriteKept(entry, entryrecord.Kept{Intent: &entryrecord.Intent{
		Published: &entryrecord.Credential{ID: "k5", Issuer: "V", IssuedIn: "v"},
		Revoke:    []entryrecord.Credential{{Issuer: "W", IssuedIn: "w"}},
		Retire:    &entryrecord.Retiring{Credential: entryrecord.Credential{ID: "k4", Issuer: "U", IssuedIn: "u"}},
	}})
	want = []entryinfo.IssuerPlace{{Issuer: "U", Place: "u"}, {Issuer: "V", Place: "v"}, {Issuer: "W", Place: "w"}}
	if got := entryinfo.PlacesRecordedBy("e", entry, nil); !slices.Equal(got, want) {
		t.Fatalf("PlacesRecordedBy with an intent and no secret = %v; want %v", got, want)
	}
	// Another entry's records (one of the same shoot namespace) are not e's.
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 0 {
		t.Fatalf("another entry's records = %v; want none", got)
	}
	// A record written before it named its entry: the secret's last writer's.
	record.Entry = ""
	entryrecord.Write(secret, record)
	secret[genericactuator.AnnotationKeyCreatedByBackupEntry] = "f"
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 3 {
		t.Fatalf("the last writer's records = %v; want 3", got)
	}
}

// TestPlacesRecordedByEarlierBuilds reads the records earlier builds wrote, one annotation a
// field, until the next write rewrites them (entryrecord's tests).
func TestPlacesRecordedByEarlierBuilds(t *testing.T) {
	secret := map[string]string{
		"backup.extensions.gardener.cloud/entry-credential-of":        "e",
		"backup.extensions.gardener.cloud/entry-credential":           "k3",
		"backup.extensions.gardener.cloud/entry-credential-issuer":    "X",
		"backup.extensions.gardener.cloud/entry-credential-issued-in": "new",
		"backup.extensions.gardener.cloud/entry-credential-unrevoked": `[{"ID":"k1","Issuer":"X","IssuedIn":"old"},{"ID":"k0","Issuer":"Y","IssuedIn":"y"}]`,
		"backup.extensions.gardener.cloud/entry-credential-retiring":  `{"ID":"k2","Issuer":"X","IssuedIn":"new","Until":"2026-01-01T00:00:00Z"}`,
	}
	entry := map[string]string{"backup.extensions.gardener.cloud/entry-credential-issuers": `[{"ID":"k9","Issuer":"Z","IssuedIn":"z"}]`}
	want := []entryinfo.IssuerPlace{{Issuer: "X", Place: "new"}, {Issuer: "X", Place: "old"}, {Issuer: "Y", Place: "y"}, {Issuer: "Z", Place: "z"}}
	if got := entryinfo.PlacesRecordedBy("e", entry, secret); !slices.Equal(got, want) {
		t.Fatalf("PlacesRecordedBy = %v; want %v", got, want)
	}
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 0 {
		t.Fatalf("another entry's records = %v; want none", got)
	}
	delete(secret, "backup.extensions.gardener.cloud/entry-credential-of")
	secret[genericactuator.AnnotationKeyCreatedByBackupEntry] = "f"
	if got := entryinfo.PlacesRecordedBy("f", nil, secret); len(got) != 3 {
		t.Fatalf("the last writer's records = %v; want 3", got)
	}
}
