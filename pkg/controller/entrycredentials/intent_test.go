// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// TestRestartBetweenTheWriteAndTheRecord (issue 44, the review's crash window): a restart
// between gardener's write of the secret (which resets its annotations) and the pass's record
// of it loses nothing. Before, the next pass took the published credential back by Owns and the
// rotated-out one stayed valid, neither retiring nor on any record, until the next rotation; the
// honoured request rotated again; a switch-off's credential was never revoked.
func TestRestartBetweenTheWriteAndTheRecord(t *testing.T) {
	t.Run("a rotation on request", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		first := f.published()
		f.requestRotation("r1")
		before := time.Now()
		f.crashAfterWrite()
		second := f.published()
		if second == first || f.record().Published != nil {
			t.Fatalf("after the write: published %q, record %v; want a new credential and no record (gardener's write resets it)", second, f.etcdBackup().Annotations)
		}
		if c, _ := f.issuer.Valid(first); !c.RetireAt.IsZero() {
			t.Fatalf("the rotated-out credential is retiring before the record: %v", c.RetireAt)
		}
		f.mustReconcile() // the restarted controller
		if got := f.published(); got != second || f.issuer.Issuances() != 2 {
			t.Fatalf("published %q after %d issuances; want %s kept, no second rotation for the honoured request", got, f.issuer.Issuances(), second)
		}
		f.wantRotated(first, credentials.DefaultGracePeriod, before)
		be := f.current()
		if be.Annotations[entrycredentials.AnnotationRotateCredentials] != "" || be.Annotations[entryrecord.AnnotationEntryCredentialKept] != "" {
			t.Fatalf("entry annotations %v; want the request and the intent removed", be.Annotations)
		}
	})
	t.Run("a switch-off", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		own := f.published()
		f.switchTo(false)
		f.crashAfterWrite()
		if f.published() != "value" {
			t.Fatalf("after the write: published %q; want the bucket's", f.published())
		}
		f.mustReconcile()
		if _, ok := f.issuer.Valid(own); ok {
			t.Fatalf("the entry's own credential %s is still valid after the switch-off", own)
		}
		if f.current().Annotations[entryrecord.AnnotationEntryCredentialKept] != "" {
			t.Fatal("the intent is left on the entry")
		}
	})
	t.Run("a switch-off, then a rotation of the bucket's credential before the restart", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		own := f.published()
		f.switchTo(false)
		f.crashAfterWrite()
		// The bucket's generated credential rotates: gardenlet copies the new one into the
		// entry's secret, and the etcd-backup secret's data is no longer the bucket's.
		bucketSecret := &corev1.Secret{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, bucketSecret); err != nil {
			t.Fatal(err)
		}
		bucketSecret.Data["key"] = []byte("value-2")
		if err := f.client.Update(context.Background(), bucketSecret); err != nil {
			t.Fatal(err)
		}
		f.mustReconcile()
		if _, ok := f.issuer.Valid(own); ok {
			t.Fatalf("the entry's own credential %s is still valid after the switch-off", own)
		}
		if f.published() != "value-2" || f.current().Annotations[entryrecord.AnnotationEntryCredentialKept] != "" {
			t.Fatalf("published %q, entry annotations %v; want the bucket's new credential, nothing kept", f.published(), f.current().Annotations)
		}
	})
	t.Run("a write that did not happen: the intent (an earlier build's form) is not taken up, the request is honoured", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		first := f.published()
		f.requestRotation("r1")
		// The pass issued and announced, then its write failed: the secret still holds first,
		// with its record.
		f.be = f.current()
		const earlierIntent = "backup.extensions.gardener.cloud/entry-credential-intent"
		metav1.SetMetaDataAnnotation(&f.be.ObjectMeta, earlierIntent, `{"Published":{"Entry":"`+testEntry+`","ID":"orphan","Issuer":"fake","IssuedIn":"fake:one","Access":"ReadWrite"},"Rotation":"requested","Request":"r1"}`)
		if err := f.client.Update(context.Background(), f.be); err != nil {
			t.Fatal(err)
		}
		f.mustReconcile()
		if got := f.published(); got == first || got == "orphan" {
			t.Fatalf("published %q; want the request honoured with a new credential", got)
		}
		if a := f.current().Annotations; a[earlierIntent] != "" || a[entryrecord.AnnotationEntryCredentialKept] != "" {
			t.Fatalf("entry annotations %v; want the earlier build's intent removed by the pass, nothing kept", a)
		}
	})
}

// TestMigrateAfterARestartBetweenTheWriteAndTheRecord: a Migrate right after a restart that lost
// the record retires the credential the secret holds for the migration grace, by the intent.
// Before, nothing named it: it was not retired, and the first issuance on the new seed revoked
// it at once.
func TestMigrateAfterARestartBetweenTheWriteAndTheRecord(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.crashAfterWrite()
	id := f.published()
	before := time.Now()
	if err := f.actuator().Migrate(context.Background(), logr.Discard(), f.current()); err != nil {
		t.Fatalf("Migrate = %v", err)
	}
	c, ok := f.issuer.Valid(id)
	if !ok || c.RetireAt.Before(before.Add(credentials.DefaultMigrationGracePeriod)) {
		t.Fatalf("after Migrate: %s valid %v, retiring at %v; want valid until about now + %s", id, ok, c.RetireAt, credentials.DefaultMigrationGracePeriod)
	}
}

// TestDeleteAfterARestartBetweenTheWriteAndTheRecord: an entry deleted after a restart that lost
// the record, its issuer no longer configured (here: switched off, as an issuer changed to one
// that does not reach the credential), revokes the credential its intent names. Before, the
// deletion kept only the secret's record, which gardener's write had reset: the credential
// stayed valid.
func TestDeleteAfterARestartBetweenTheWriteAndTheRecord(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.crashAfterWrite()
	id := f.published()
	if f.record().Published != nil {
		t.Fatalf("after the write: record %v; want none (gardener's write resets it)", f.etcdBackup().Annotations)
	}
	f.switchTo(false) // no reconcile: the intent is all that names the credential
	if err := f.actuator().Delete(context.Background(), logr.Discard(), f.current()); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if _, ok := f.issuer.Valid(id); ok {
		t.Fatalf("the deleted entry's credential %s, named by its intent alone, is still valid", id)
	}
}
