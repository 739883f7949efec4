// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	. "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestDue: when the rotation scheduler asks for a pass. Finding 2: a retired credential's end is
// due by itself, with no period and no request.
func TestDue(t *testing.T) {
	published := entryrecord.Record{Entry: "e", Published: cred("k1", "p1", time.Hour)}
	retiring := published
	retiring.NextEnd = now.Add(10 * time.Minute)
	cases := []struct {
		name     string
		settings *credentials.EntrySettings
		request  string
		record   entryrecord.Record
		want     time.Time
		ok       bool
	}{
		{name: "a request: now", settings: on, request: "r1", want: now, ok: true},
		{name: "no period, nothing retiring: never", settings: on, record: published},
		{name: "nothing published: never", settings: period, record: entryrecord.Record{Entry: "e"}},
		{name: "no issue time recorded: never (the next pass records it)", settings: period, record: entryrecord.Record{Entry: "e", Published: cred("k1", "p1", 0)}},
		{name: "period", settings: period, record: published, want: now.Add(23 * time.Hour), ok: true},
		{name: "finding 2: a retired credential's end, without period", settings: on, record: retiring, want: now.Add(10 * time.Minute), ok: true},
		{name: "the earlier of the period and the end", settings: period, record: retiring, want: now.Add(10 * time.Minute), ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Due(c.settings, c.request, c.record, now)
			if !got.Equal(c.want) || ok != c.ok {
				t.Fatalf("Due = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// TestDeletionRevocations: a deleted entry revokes, once its objects are gone, every credential
// of each issuer and access its kept records name and of the configured issuer, each once.
func TestDeletionRevocations(t *testing.T) {
	ro := objectstore.EntryReadOnly
	kept := []entryrecord.Credential{*cred("k1", "p1", 0), *cred("k0", "p0", 0), {ID: "y", Issuer: "Y", IssuedIn: "py", Access: rw}}
	cases := []struct {
		name     string
		kept     []entryrecord.Credential
		settings *credentials.EntrySettings
		access   objectstore.EntryAccess
		want     []entryrecord.Credential
	}{
		{name: "nothing kept, off: nothing", access: rw},
		{name: "nothing kept (a restart lost the record): the configured issuer", settings: on, access: rw,
			want: []entryrecord.Credential{{Issuer: "X", Access: rw}}},
		{name: "kept records and the configured issuer, each issuer and access once", kept: kept, settings: on, access: rw,
			want: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}, {Issuer: "Y", IssuedIn: "py", Access: rw}}},
		{name: "switched off: the kept records' issuers", kept: kept, access: rw,
			want: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}, {Issuer: "Y", IssuedIn: "py", Access: rw}}},
		{name: "a source- entry: the configured issuer's read-only ones too", kept: kept[:1], settings: on, access: ro,
			want: []entryrecord.Credential{{Issuer: "X", IssuedIn: "p1", Access: rw}, {Issuer: "X", Access: ro}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DeletionRevocations(c.kept, c.settings, c.access); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("DeletionRevocations = %+v; want %+v", got, c.want)
			}
		})
	}
}

// TestMigrationRetiree: what a Migrate retires for the migration grace.
func TestMigrationRetiree(t *testing.T) {
	k1, k2 := cred("k1", "p1", time.Hour), cred("k2", "p1", 0)
	cases := []struct {
		name   string
		record entryrecord.Record
		ours   bool
		intent *entryrecord.Intent
		want   *entryrecord.Credential
		byID   bool
	}{
		{name: "the published one on record", record: entryrecord.Record{Entry: "e", Published: k1}, ours: true, intent: &entryrecord.Intent{Published: k2}, want: k1},
		{name: "a restart lost the record after the write: the intent's, confirmed by its ID", record: entryrecord.Record{Entry: "e"}, ours: true, intent: &entryrecord.Intent{Published: k2}, want: k2, byID: true},
		{name: "the bucket's credential, no intent: none", record: entryrecord.Record{Entry: "e"}, ours: true},
		{name: "a switch-off's intent: none", record: entryrecord.Record{Entry: "e"}, ours: true, intent: &entryrecord.Intent{Revoke: []entryrecord.Credential{*k1}}},
		{name: "finding 9: another entry's record: none of this entry's", record: entryrecord.Record{Entry: "f", Published: k1}, intent: &entryrecord.Intent{Published: k2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, byID := MigrationRetiree(c.record, c.ours, c.intent)
			if !reflect.DeepEqual(got, c.want) || byID != c.byID {
				t.Fatalf("MigrationRetiree = %+v, %v; want %+v, %v", got, byID, c.want, c.byID)
			}
		})
	}
}
