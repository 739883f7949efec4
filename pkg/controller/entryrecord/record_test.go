// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryrecord_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var (
	issued = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	until  = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
)

// earlierSecret is a record as earlier builds wrote it on an etcd-backup secret, one annotation
// a field, and want the same in this build's form.
var (
	earlierSecret = map[string]string{
		genericactuator.AnnotationKeyCreatedByBackupEntry:                  "e",
		"backup.extensions.gardener.cloud/entry-credential-of":             "e",
		"backup.extensions.gardener.cloud/entry-credential":                "k3",
		"backup.extensions.gardener.cloud/entry-credential-issuer":         "X",
		"backup.extensions.gardener.cloud/entry-credential-issued-in":      "new",
		"backup.extensions.gardener.cloud/entry-credential-access":         "read-write",
		"backup.extensions.gardener.cloud/entry-credential-issued-at":      issued.Format(time.RFC3339),
		"backup.extensions.gardener.cloud/entry-credential-unrevoked":      `[{"Entry":"e","ID":"k1","Issuer":"X","IssuedIn":"old","Access":"read-write"}]`,
		"backup.extensions.gardener.cloud/entry-credential-retiring":       `{"Entry":"e","ID":"k2","Issuer":"X","IssuedIn":"new","Access":"read-write","IssuedAt":"` + issued.Format(time.RFC3339) + `","Until":"` + until.Format(time.RFC3339) + `"}`,
		"backup.extensions.gardener.cloud/entry-credential-retiring-until": until.Format(time.RFC3339),
	}
	want = entryrecord.Record{
		Entry:     "e",
		Published: &entryrecord.Credential{ID: "k3", Issuer: "X", IssuedIn: "new", Access: objectstore.EntryReadWrite, IssuedAt: issued},
		Unrevoked: []entryrecord.Credential{{ID: "k1", Issuer: "X", IssuedIn: "old", Access: objectstore.EntryReadWrite}},
		Retiring:  &entryrecord.Retiring{Credential: entryrecord.Credential{ID: "k2", Issuer: "X", IssuedIn: "new", Access: objectstore.EntryReadWrite, IssuedAt: issued}, Until: until},
		NextEnd:   until,
	}
)

// TestEarlierRecordReadThenRewritten: a secret of an existing landscape is read in its earlier
// form; the next write puts this build's form in its place and removes every earlier key.
func TestEarlierRecordReadThenRewritten(t *testing.T) {
	a := clone(earlierSecret)
	got, ours, err := entryrecord.Read("e", a)
	if err != nil || !ours || !reflect.DeepEqual(got, want) {
		t.Fatalf("Read = %+v, %v; want %+v, true", got, ours, want)
	}
	if !entryrecord.Stale(a) {
		t.Fatal("Stale = false on an earlier build's record")
	}
	if _, ours, _ := entryrecord.Read("f", a); ours {
		t.Fatal("another entry's earlier record read as f's")
	}
	entryrecord.Write(a, got)
	if entryrecord.Stale(a) {
		t.Fatalf("after Write, annotations %v still hold an earlier build's keys", a)
	}
	if len(a) != 2 || a[entryrecord.AnnotationEntryCredentialRecord] == "" {
		t.Fatalf("after Write, annotations %v; want created-by and %s alone", a, entryrecord.AnnotationEntryCredentialRecord)
	}
	if again, ours, err := entryrecord.Read("e", a); err != nil || !ours || !reflect.DeepEqual(again, want) {
		t.Fatalf("Read after Write = %+v, %v; want %+v", again, ours, want)
	}
	if strings.Contains(a[entryrecord.AnnotationEntryCredentialRecord], `"Entry"`) {
		t.Fatalf("record %s in an earlier build's field names", a[entryrecord.AnnotationEntryCredentialRecord])
	}
}

// TestRecordOf: a record names its entry; without a record (gardener's write reset the
// annotations) or with one written before it named its entry, the secret's last writer's.
func TestRecordOf(t *testing.T) {
	a := map[string]string{genericactuator.AnnotationKeyCreatedByBackupEntry: "new"}
	if !entryrecord.Of("new", a) || entryrecord.Of("old", a) {
		t.Fatal("without a record: want the last writer's")
	}
	entryrecord.Write(a, entryrecord.Record{Entry: "old", Unrevoked: []entryrecord.Credential{{Issuer: "X"}}})
	if entryrecord.Of("new", a) || !entryrecord.Of("old", a) {
		t.Fatal("with old's record: want old's, not the last writer's")
	}
	entryrecord.Write(a, entryrecord.Record{Entry: "old"})
	if _, ok := a[entryrecord.AnnotationEntryCredentialRecord]; ok || !entryrecord.Of("new", a) {
		t.Fatalf("an empty record: annotations %v; want none, the last writer's", a)
	}
}

// TestKept: what a BackupEntry kept in an earlier build's two annotations is read, and the next
// write keeps it in one and removes both.
func TestKept(t *testing.T) {
	a := map[string]string{
		"backup.extensions.gardener.cloud/entry-credential-intent":  `{"Published":{"Entry":"e","ID":"k1","Issuer":"X","IssuedIn":"p","Access":"read-write"},"Revoke":[{"Issuer":"Y"}],"Rotation":"requested","Request":"r1"}`,
		"backup.extensions.gardener.cloud/entry-credential-issuers": `[{"Entry":"e","ID":"k0","Issuer":"Z","IssuedIn":"z"}]`,
		"other": "kept",
	}
	wantKept := entryrecord.Kept{
		Intent: &entryrecord.Intent{Published: &entryrecord.Credential{ID: "k1", Issuer: "X", IssuedIn: "p", Access: objectstore.EntryReadWrite},
			Revoke: []entryrecord.Credential{{Issuer: "Y"}}, Rotation: "requested", Request: "r1"},
		ForDeletion: []entryrecord.Credential{{ID: "k0", Issuer: "Z", IssuedIn: "z"}},
	}
	got := entryrecord.ReadKept(a)
	if !reflect.DeepEqual(got, wantKept) {
		t.Fatalf("ReadKept = %+v; want %+v", got, wantKept)
	}
	if !entryrecord.WriteKept(a, got) || len(a) != 2 || a["other"] != "kept" {
		t.Fatalf("after WriteKept, annotations %v; want %s and the other one alone", a, entryrecord.AnnotationEntryCredentialKept)
	}
	if again := entryrecord.ReadKept(a); !reflect.DeepEqual(again, wantKept) {
		t.Fatalf("ReadKept after WriteKept = %+v; want %+v", again, wantKept)
	}
	if entryrecord.WriteKept(a, wantKept) {
		t.Fatal("WriteKept of what is kept already says it changed")
	}
	got.Intent = nil
	got.ForDeletion = nil
	if !entryrecord.WriteKept(a, got) || len(a) != 1 {
		t.Fatalf("nothing kept: annotations %v; want the other one alone", a)
	}
}

func clone(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestRecordThatDoesNotDecode: a record in this build's form that does not decode is an error,
// not an empty record (which would forget the credentials it names).
func TestRecordThatDoesNotDecode(t *testing.T) {
	a := map[string]string{
		genericactuator.AnnotationKeyCreatedByBackupEntry: "e",
		entryrecord.AnnotationEntryCredentialRecord:       `{"entry":"e","unrevoked":[{"id":`,
	}
	if _, ours, err := entryrecord.Read("e", a); err == nil || !ours || !strings.Contains(err.Error(), entryrecord.AnnotationEntryCredentialRecord) {
		t.Fatalf("Read = ours %v, %v; want the last writer's, an error naming the annotation", ours, err)
	}
	if _, ours, err := entryrecord.Read("f", a); ours || err != nil {
		t.Fatalf("Read of another entry = ours %v, %v; want not f's, no error", ours, err)
	}
}
