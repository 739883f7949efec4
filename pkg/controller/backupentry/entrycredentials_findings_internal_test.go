// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Migrate does not wait for an issuer the operator's credentials build no more: the
// migration goes on, says why the credential was not retired, and releases the entry.
func TestMigrateGoesOnWhenTheEntryIssuerCannotBeBuilt(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	f.provider.EntryIssuer = nil // the provider builds no issuer of that name now
	f.events()
	f.be = f.current()
	if err := f.actuator().Migrate(context.Background(), logr.Discard(), f.be); err != nil {
		t.Fatalf("Migrate = %v; want the migration to go on", err)
	}
	if f.held() {
		t.Fatal("the entry is still held after Migrate")
	}
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+ReasonEntryCredentialRetired) || !strings.Contains(ev[0], "first issuance on its new seed revokes it") {
		t.Fatalf("events %v; want one warning saying the credential was not retired and who ends it", ev)
	}
}

// One failed revocation does not drop the others of the pass: each is tried, and each that
// failed stays on record.
func TestEveryUnrevokedCredentialIsTriedAndKeptOnRecord(t *testing.T) {
	ctx := context.Background()
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	own := f.published()
	// A credential an earlier pass could not revoke (its issuer reaches another place now),
	// recorded as a build before this one wrote it (one record).
	raw, _ := json.Marshal(entryRecord{ID: "elsewhere-1", Issuer: "fake", IssuedIn: "fake:gone", Access: objectstore.EntryReadWrite})
	s := f.etcdBackup()
	s.Annotations[AnnotationEntryUnrevoked] = string(raw)
	if err := f.client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	f.switchTo(false) // the pass revokes the entry's own credential too
	err := f.reconcile()
	var elsewhere *objectstore.CredentialElsewhereError
	if !errors.As(err, &elsewhere) {
		t.Fatalf("Reconcile = %v; want the failed revocation's CredentialElsewhereError", err)
	}
	if _, ok := f.issuer.valid(own); ok {
		t.Fatalf("the entry's own credential %s, listed after a revocation that failed, is still valid", own)
	}
	got := unrevokedFrom(f.etcdBackup().Annotations)
	if len(got) != 1 || got[0].ID != "elsewhere-1" {
		t.Fatalf("unrevoked on record %+v; want the failed one alone", got)
	}
}
