// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
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
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+entrycredentials.ReasonEntryCredentialRetired) || !strings.Contains(ev[0], "first issuance on its new seed revokes it") {
		t.Fatalf("events %v; want one warning saying the credential was not retired and who ends it", ev)
	}
}

// One failed revocation does not drop the others of the pass: each is tried, and each that
// failed stays on record.
func TestEveryUnrevokedCredentialIsTriedAndKeptOnRecord(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	own := f.published()
	// A credential an earlier pass could not revoke (its issuer reaches another place now),
	// recorded as a build before this one wrote it (one record).
	f.changeRecord(func(r *entryrecord.Record) {
		r.Unrevoked = append(r.Unrevoked, entryrecord.Credential{ID: "elsewhere-1", Issuer: "fake", IssuedIn: "fake:gone", Access: objectstore.EntryReadWrite})
	})
	f.switchTo(false) // the pass revokes the entry's own credential too
	err := f.reconcile()
	var elsewhere *objectstore.CredentialElsewhereError
	if !errors.As(err, &elsewhere) {
		t.Fatalf("Reconcile = %v; want the failed revocation's CredentialElsewhereError", err)
	}
	if _, ok := f.issuer.Valid(own); ok {
		t.Fatalf("the entry's own credential %s, listed after a revocation that failed, is still valid", own)
	}
	got := f.record().Unrevoked
	if len(got) != 1 || got[0].ID != "elsewhere-1" {
		t.Fatalf("unrevoked on record %+v; want the failed one alone", got)
	}
}

// Two entries of one shoot namespace (a shoot re-created under its name while gardenlet keeps
// the old entry through its deletion grace) both write its etcd-backup secret: neither takes
// the other's credential for its own, revokes it, or says OwnPrefix of it; deleting one leaves
// the other's credential valid.
func TestTwoEntriesOfOneNamespaceNeverShareACredential(t *testing.T) {
	ctx := context.Background()
	for _, order := range []string{"old first", "new first"} {
		t.Run(order, func(t *testing.T) {
			f := newEntryCredFixture(t, testEntry, true)
			first, second := f.be.Name, f.createSibling()
			if order == "new first" {
				first, second = second, first
			}
			owner := func(id string) string {
				c, ok := f.issuer.Valid(id)
				if !ok {
					return "revoked"
				}
				return strings.TrimSuffix(c.Prefix, "/")
			}
			reconcileAs := func(name string) string {
				t.Helper()
				f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}}
				f.mustReconcile()
				id := f.published()
				if owner(id) != name {
					t.Fatalf("%s published %s, a credential of %q; want one of its own prefix", name, id, owner(id))
				}
				f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, id)
				return id
			}
			a1 := reconcileAs(first)
			b1 := reconcileAs(second)
			if owner(a1) != first {
				t.Fatalf("%s's credential %s: %s after %s's pass", first, a1, owner(a1), second)
			}
			a2 := reconcileAs(first) // writes the secret again: a credential of its own
			if owner(b1) != second {
				t.Fatalf("%s's credential %s: %s after %s's pass", second, b1, owner(b1), first)
			}
			// The entry that does not hold the secret is deleted: the one that does keeps its credential.
			f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}}
			f.be = f.current()
			if err := f.actuator().Delete(ctx, logr.Discard(), f.be); err != nil {
				t.Fatalf("Delete of %s = %v", second, err)
			}
			if owner(b1) != "revoked" {
				t.Fatalf("the deleted %s's credential %s is still valid", second, b1)
			}
			f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
			if owner(a2) != first || f.published() != a2 {
				t.Fatalf("after %s's deletion: etcd-backup holds %s (%s); want %s's %s, valid", second, f.published(), owner(f.published()), first, a2)
			}
		})
	}
}

// At the store's quota with no etcd-backup secret yet (a migration's destination), the
// condition does not claim the entry keeps a credential.
func TestQuotaWithoutASecretSaysSo(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.issuer.IssueErr = fmt.Errorf("%w: IAM user has two access keys in use", objectstore.ErrQuotaExceeded)
	if err := f.reconcile(); !errors.Is(err, objectstore.ErrQuotaExceeded) && !strings.Contains(fmt.Sprint(err), "two access keys") {
		t.Fatalf("Reconcile = %v; want the quota", err)
	}
	f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonNotIssued, "no etcd-backup secret until one can be issued")
}

// A source- entry on the seed a shoot migrated to, whose bucket has generated credentials: the
// seed has no BackupBucket of the source's bucket, so the credentials at hand are the entry's
// secret (the generated one), which cannot issue. source-etcd-backup still gets a credential
// (the bucket's, read-write), and the condition says why.
func TestSourceEntryWithGeneratedBucketCredentials(t *testing.T) {
	f := newEntryCredFixture(t, "source-"+testEntry, true)
	f.issuer.IssueErr = fmt.Errorf("creating IAM user: %w: the generated credential may not create users", objectstore.ErrForbidden)
	f.mustReconcile()
	if s := f.etcdBackup(); s.Name != "source-etcd-backup" || string(s.Data["key"]) != "value" {
		t.Fatalf("%s holds %q; want the bucket's credential", s.Name, s.Data["key"])
	}
	f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWide, "cannot issue one")
	// A shoot's own (read-write) entry refused the same way fails: its bucket is this seed's.
	g := newEntryCredFixture(t, testEntry, true)
	g.issuer.IssueErr = f.issuer.IssueErr
	if err := g.reconcile(); !errors.Is(err, objectstore.ErrForbidden) {
		t.Fatalf("Reconcile of a shoot's entry refused = %v; want the refusal", err)
	}
}

// A retired credential ends at its time with no other event: the pass records when the next
// retiree ends, the rotation scheduler asks for a pass then, and that pass ends it. Both ways a
// credential retires: rotated out (rotation.gracePeriod), and left behind by a migration and
// spared by the destination's first issuance (migrationGracePeriod).
func TestRetiredCredentialEndsAtItsTime(t *testing.T) {
	ctx := context.Background()
	const grace = 2 * time.Second
	for _, how := range []string{"rotated out", "migrated away"} {
		t.Run(how, func(t *testing.T) {
			f := newEntryCredFixture(t, testEntry, true)
			settings := rotating(grace)
			settings.MigrationGracePeriod = &metav1.Duration{Duration: grace}
			f.configure(settings)
			f.mustReconcile()
			retired := f.published()
			switch how {
			case "rotated out":
				f.requestRotation("now")
				f.mustReconcile()
			case "migrated away":
				f.be = f.current()
				if err := f.actuator().Migrate(ctx, logr.Discard(), f.be); err != nil {
					t.Fatal(err)
				}
				// The destination: the shoot's new namespace has no etcd-backup secret yet.
				if err := f.client.Delete(ctx, f.etcdBackup()); err != nil {
					t.Fatal(err)
				}
				f.mustReconcile()
			}
			own := f.published()
			c, ok := f.issuer.Valid(retired)
			if own == retired || !ok || c.RetireAt.IsZero() {
				t.Fatalf("published %s, %s valid %v retiring at %v; want a new one published, the old one retiring", own, retired, ok, c.RetireAt)
			}
			if until := f.record().NextEnd; until.Before(c.RetireAt.Truncate(time.Second)) || until.After(c.RetireAt) {
				t.Fatalf("the record's next end %v; want the retiree's end %v", until, c.RetireAt)
			}
			// The scheduler: nothing is due before the end, a pass is asked for at it.
			be := f.current()
			be.Status.LastOperation = &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded}
			if err := f.client.Status().Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			s := entrycredentials.NewRotationScheduler(entrycredentials.New(f.registered(), f.client, nil, f.recorder), f.client)
			for !time.Now().After(c.RetireAt) {
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := s.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(be)}); err != nil {
				t.Fatal(err)
			}
			if f.current().Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.GardenerOperationReconcile {
				t.Fatal("the scheduler did not ask for a pass at the retiree's end")
			}
			f.mustReconcile() // the pass asked for
			if _, ok := f.issuer.Valid(retired); ok {
				t.Fatalf("%s is still valid after its time and the pass asked for then", retired)
			}
			if _, ok := f.issuer.Valid(own); !ok || f.published() != own {
				t.Fatalf("the published %s was touched", own)
			}
			if r := f.record(); !r.NextEnd.IsZero() || r.Retiring != nil {
				t.Fatalf("record %+v with nothing retiring", r)
			}
		})
	}
}
