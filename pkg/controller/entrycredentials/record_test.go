// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// TestRecordOfAnEarlierBuildIsRewritten: an existing landscape's etcd-backup secret holds the
// record in an earlier build's annotations. The next pass reads it (the credential is kept, not
// issued anew) and records it in entryrecord's one annotation, with every earlier key gone.
func TestRecordOfAnEarlierBuildIsRewritten(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	id, want := f.published(), f.record()
	s := f.etcdBackup()
	delete(s.Annotations, entryrecord.AnnotationEntryCredentialRecord)
	for k, v := range map[string]string{
		"backup.extensions.gardener.cloud/entry-credential-of":        testEntry,
		"backup.extensions.gardener.cloud/entry-credential":           id,
		"backup.extensions.gardener.cloud/entry-credential-issuer":    want.Published.Issuer,
		"backup.extensions.gardener.cloud/entry-credential-issued-in": want.Published.IssuedIn,
		"backup.extensions.gardener.cloud/entry-credential-access":    string(want.Published.Access),
		"backup.extensions.gardener.cloud/entry-credential-issued-at": want.Published.IssuedAt.Format(time.RFC3339),
	} {
		s.Annotations[k] = v
	}
	if err := f.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := f.record(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the earlier build's record read as %+v; want %+v", got, want)
	}
	f.mustReconcile()
	if f.published() != id || f.issuer.Issuances() != 1 {
		t.Fatalf("published %q after %d issuances; want %s kept", f.published(), f.issuer.Issuances(), id)
	}
	a := f.etcdBackup().Annotations
	if entryrecord.Stale(a) || a[entryrecord.AnnotationEntryCredentialRecord] == "" {
		t.Fatalf("annotations %v; want the record in %s alone", a, entryrecord.AnnotationEntryCredentialRecord)
	}
	if got := f.record(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rewritten record %+v; want %+v", got, want)
	}
}
