// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestEntryCredentialStates walks the states of an entry's own credential, each transition
// with a fresh actuator (a controller restart before every step).
func TestEntryCredentialStates(t *testing.T) {
	ctx := context.Background()
	t.Run("off: the bucket's credential, said so", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.mustReconcile()
		if f.published() != "value" || f.issuer.Issuances() != 0 {
			t.Fatalf("published %q after %d issuances; want the bucket's, none issued", f.published(), f.issuer.Issuances())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWide, "entryCredentials is not set")
		if f.isolation(metrics.IsolationBucketWide) != 1 {
			t.Fatal("metric: not bucket_wide")
		}
	})
	t.Run("issued, published, recorded; a reconcile keeps it", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		c, ok := f.issuer.Valid(id)
		if !ok || c.Prefix != testEntry+"/" || c.Access != objectstore.EntryReadWrite || c.Bucket != testBucket {
			t.Fatalf("published %q (%+v, valid %v); want a read-write credential of the entry's prefix", id, c, ok)
		}
		if p := f.record().Published; p == nil || p.ID != id || p.Issuer != "fake" || p.IssuedIn != "fake:one" || p.Access != "read-write" {
			t.Fatalf("record %+v; want the credential's record", f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, id)
		if f.isolation(metrics.IsolationOwnPrefix) != 1 {
			t.Fatal("metric: not own_prefix")
		}
		f.mustReconcile()
		if f.published() != id || f.issuer.Issuances() != 1 {
			t.Fatalf("second reconcile published %q after %d issuances; want %s kept", f.published(), f.issuer.Issuances(), id)
		}
	})
	t.Run("restart between issue and publish: the unpublished one is revoked by the next pass", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		prefix, _ := objectstore.EntryPrefix(testEntry)
		lost, err := f.issuer.IssueEntryCredential(ctx, testBucket, prefix, objectstore.EntryReadWrite, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.mustReconcile()
		if _, ok := f.issuer.Valid(lost.ID); ok || f.published() == lost.ID || f.issuer.Count() != 1 {
			t.Fatalf("the credential issued but never published (%s) survived; published %s", lost.ID, f.published())
		}
	})
	t.Run("restart between publish and record: the published one is recognised, not reissued", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		s := f.etcdBackup()
		s.Annotations = map[string]string{genericactuator.AnnotationKeyCreatedByBackupEntry: testEntry} // as the library's write leaves it
		if err := f.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		f.mustReconcile()
		if f.published() != id || f.issuer.Issuances() != 1 || f.record().Published == nil || f.record().Published.ID != id {
			t.Fatalf("published %q, %d issuances, record %+v; want %s kept and recorded again", f.published(), f.issuer.Issuances(), f.record(), id)
		}
		if _, ok := f.issuer.Valid(id); !ok {
			t.Fatal("the published credential was revoked")
		}
	})
	t.Run("switched on while etcd-backup holds the bucket's previous credential: not taken for the entry's", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.mustReconcile()
		s := f.etcdBackup()
		s.Data["key"] = []byte("bucket-credential-before-its-rotation")
		if err := f.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		f.switchTo(true)
		f.mustReconcile()
		if _, ok := f.issuer.Valid(f.published()); !ok || f.issuer.Issuances() != 1 {
			t.Fatalf("published %q after %d issuances; want the entry's own, issued", f.published(), f.issuer.Issuances())
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, f.published())
	})
	t.Run("switch off: the bucket's credential again, the entry's revoked", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.switchTo(false)
		f.mustReconcile()
		if _, ok := f.issuer.Valid(id); ok || f.published() != "value" || f.record().Published != nil {
			t.Fatalf("after switching off: %s valid, published %q, record %+v", id, f.published(), f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWide, "entryCredentials is not set")
		if f.isolation(metrics.IsolationBucketWide) != 1 {
			t.Fatal("metric: not bucket_wide after the switch-off")
		}
		// And on again: a new credential.
		f.switchTo(true)
		f.mustReconcile()
		if f.published() == id || f.published() == "value" {
			t.Fatalf("switched on again, published %q", f.published())
		}
	})
	t.Run("deleted: revoked once the objects are gone, also when switched off meanwhile", func(t *testing.T) {
		for _, offBefore := range []bool{false, true} {
			f := newEntryCredFixture(t, testEntry, true)
			f.mustReconcile()
			id := f.published()
			if offBefore {
				f.switchTo(false) // no reconcile: the record on the secret is all that names it
			}
			f.be = f.current()
			if err := f.actuator().Delete(ctx, logr.Discard(), f.be); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			if _, ok := f.issuer.Valid(id); ok {
				t.Fatalf("switched off before: %v; the deleted entry's credential %s is still valid", offBefore, id)
			}
		}
	})
	t.Run("migrated away: valid for the grace, then ended", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.be = f.current()
		before := time.Now()
		if err := f.actuator().Migrate(ctx, logr.Discard(), f.be); err != nil {
			t.Fatalf("Migrate = %v", err)
		}
		c, ok := f.issuer.Valid(id)
		if !ok || c.RetireAt.Before(before.Add(credentials.DefaultMigrationGracePeriod)) || c.RetireAt.After(time.Now().Add(credentials.DefaultMigrationGracePeriod)) {
			t.Fatalf("after Migrate: valid %v, retires at %v; want valid until about now + %s", ok, c.RetireAt, credentials.DefaultMigrationGracePeriod)
		}
		// The destination's first issuance (no record there) spares it while it retires.
		prefix, _ := objectstore.EntryPrefix(testEntry)
		if _, err := f.issuer.IssueEntryCredential(ctx, testBucket, prefix, objectstore.EntryReadWrite, nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.issuer.Valid(id); !ok {
			t.Fatal("the migrated credential was revoked before its grace ended")
		}
	})
	t.Run("source- entry: a read-only credential in source-etcd-backup", func(t *testing.T) {
		f := newEntryCredFixture(t, "source-"+testEntry, true)
		f.mustReconcile()
		s := f.etcdBackup()
		c, ok := f.issuer.Valid(string(s.Data["key"]))
		if s.Name != "source-etcd-backup" || !ok || c.Access != objectstore.EntryReadOnly || c.Prefix != testEntry+"/" {
			t.Fatalf("secret %s holds %q (%+v, valid %v); want a read-only credential of %s/", s.Name, s.Data["key"], c, ok, testEntry)
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, "read-only")
	})
	t.Run("at a quota: ERR_INFRA_QUOTA_EXCEEDED, the secret unchanged", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.issuer.IssueErr = fmt.Errorf("creating IAM user: %w: the account has as many IAM users as AWS allows", objectstore.ErrQuotaExceeded)
		s := f.etcdBackup()
		s.Annotations = nil // a lost record: a new credential must be issued
		s.Data["key"] = []byte("value")
		if err := f.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		err := f.reconcile()
		if got := codes(err); !slices.Equal(got, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}) {
			t.Fatalf("codes %v of %v; want ERR_INFRA_QUOTA_EXCEEDED", got, err)
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonNotIssued, "as many IAM users")
		if f.published() != "value" {
			t.Fatalf("published %q; want the secret unchanged", f.published())
		}
		_ = id
	})
	t.Run("at a quota with allowBucketCredentialAtQuota: the bucket's credential, said so; upgraded when headroom returns", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.allowBucketCredentialAtQuota()
		f.issuer.IssueErr = fmt.Errorf("creating IAM user: %w: the account has as many IAM users as AWS allows", objectstore.ErrQuotaExceeded)
		f.events()
		f.mustReconcile()
		if f.published() != "value" {
			t.Fatalf("published %q; want the bucket's credential", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWideAtQuota, "allowBucketCredentialAtQuota published the bucket's")
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWideAtQuota, "as many IAM users")
		if got := f.isolations(); !slices.Equal(got, []string{metrics.IsolationBucketWideAtQuota}) {
			t.Fatalf("metric: the entry's isolation series %v; want bucket_wide_at_quota alone", got)
		}
		if ev := f.events(); !slices.ContainsFunc(ev, func(e string) bool {
			return strings.HasPrefix(e, "Warning "+entrycredentials.ReasonEntryCredentialFallback)
		}) {
			t.Fatalf("events %v; want %s", ev, entrycredentials.ReasonEntryCredentialFallback)
		}
		f.mustReconcile() // still at the quota: said once, not an event per pass
		if ev := f.events(); len(ev) != 0 {
			t.Fatalf("a second pass at the quota emitted %v", ev)
		}
		// Headroom returns: the next pass issues and publishes the entry's own.
		f.issuer.IssueErr = nil
		f.mustReconcile()
		if _, ok := f.issuer.Valid(f.published()); !ok {
			t.Fatalf("published %q with headroom again; want the entry's own credential", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, f.published())
		if got := f.isolations(); !slices.Equal(got, []string{metrics.IsolationOwnPrefix}) {
			t.Fatalf("metric: the entry's isolation series %v after the upgrade; want own_prefix alone", got)
		}
	})
	t.Run("at a quota with allowBucketCredentialAtQuota, a lost own credential: revoked, the bucket's published", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.allowBucketCredentialAtQuota()
		f.mustReconcile()
		id := f.published()
		s := f.etcdBackup()
		s.Data["key"] = []byte("edited by hand") // the record no longer matches: a new one is due
		if err := f.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		f.issuer.IssueErr = fmt.Errorf("%w: the account is full", objectstore.ErrQuotaExceeded)
		f.mustReconcile()
		if _, ok := f.issuer.Valid(id); ok || f.published() != "value" || f.record().Published != nil {
			t.Fatalf("%s valid %v, published %q, record %+v; want the bucket's published, the entry's revoked", id, ok, f.published(), f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWideAtQuota, "the account is full")
	})
	t.Run("provider without an entry issuer: bucket-wide, said so", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.provider.EntryIssuer = nil
		f.mustReconcile()
		if f.published() != "value" {
			t.Fatalf("published %q; want the bucket's", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonBucketWide, "cannot issue credentials that reach one prefix")
	})
	t.Run("issuer moved: the new one published, the old one not revoked elsewhere, kept on record", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		old := f.published()
		f.issuer.Place = "fake:two"
		err := f.reconcile()
		var elsewhere *objectstore.CredentialElsewhereError
		if !errors.As(err, &elsewhere) || !slices.Equal(codes(err), []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
			t.Fatalf("Reconcile = %v (codes %v); want a CredentialElsewhereError, ERR_CONFIGURATION_PROBLEM", err, codes(err))
		}
		if _, ok := f.issuer.Valid(old); !ok {
			t.Fatal("revoked where the issuer reaches now, not where it was issued")
		}
		r := f.record()
		if f.published() == old || len(r.Unrevoked) != 1 || r.Unrevoked[0].ID != old || r.Published == nil || r.Published.IssuedIn != "fake:two" {
			t.Fatalf("published %q, record %+v; want the new credential and the old one on record", f.published(), r)
		}
		if err := f.reconcile(); !errors.As(err, &elsewhere) {
			t.Fatalf("the next reconcile forgot the unrevoked credential: %v", err)
		}
	})
	entryCredentialRotationStates(t)
}

// TestEntryCredentialsLeaveEntriesWithoutTheSwitchAlone: off, nothing is read or written beyond
// the condition; the entry secret is never touched.
func TestEntryCredentialsNeverWriteTheEntrysSecret(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	s := &corev1.Secret{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, s); err != nil {
		t.Fatal(err)
	}
	if want := map[string][]byte{"key": []byte("value"), "unrelated": []byte("not for the shoot")}; !maps.EqualFunc(s.Data, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("the entry's credentials secret changed: %v", s.Data)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "no-such"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
