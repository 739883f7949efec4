// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// undecodable sets the entry's providerConfig to one that does not decode.
func (f *entryCredFixture) undecodable() {
	f.t.Helper()
	f.be = f.current()
	f.be.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"entryCredentials":"yes"}`)}
	if err := f.client.Update(context.Background(), f.be); err != nil {
		f.t.Fatal(err)
	}
}

// TestEntryCredentialSettingsThatCannotBeRead (issue 44, the review's open finding:
// entrySettings discarded the decode error): settings that cannot be read are never "off". Before,
// an entry whose providerConfig did not decode published the bucket's credential and revoked its
// own on its next reconcile, and its deletion skipped the configured issuer's revocation.
func TestEntryCredentialSettingsThatCannotBeRead(t *testing.T) {
	ctx := context.Background()
	t.Run("reconcile: the entry keeps its own credential, NotIssued says why", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.undecodable()
		err := f.reconcile()
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !slices.Contains(codes(err), gardencorev1beta1.ErrorConfigurationProblem) {
			t.Fatalf("Reconcile = %v (codes %v); want the decode error, ERR_CONFIGURATION_PROBLEM", err, codes(err))
		}
		if got := f.published(); got != id {
			t.Fatalf("etcd-backup holds %q; want the entry's own %s kept", got, id)
		}
		if _, ok := f.issuer.Valid(id); !ok {
			t.Fatalf("the entry's own credential %s was revoked", id)
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonNotIssued, "entryCredentials")
	})
	t.Run("deletion whose record was lost: waits for the settings, then revokes", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		s := f.etcdBackup()
		delete(s.Annotations, entryrecord.AnnotationEntryCredentialRecord) // a restart lost the record: only the configured issuer names it
		if err := f.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		f.undecodable()
		if err := f.actuator().Delete(ctx, logr.Discard(), f.current()); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Fatalf("Delete = %v; want the decode error", err)
		}
		if _, ok := f.issuer.Valid(id); !ok {
			t.Fatalf("the entry's credential %s revoked; want it valid until the settings read", id)
		}
		f.switchTo(true)
		if err := f.actuator().Delete(ctx, logr.Discard(), f.current()); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		if _, ok := f.issuer.Valid(id); ok {
			t.Fatalf("the deleted entry's credential %s is still valid", id)
		}
	})
	t.Run("seed configuration pending: not off; Migrate waits for it", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		seeded, err := provider.WithSeedConfig(f.registered(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		seeded.Await("the seed's Extension")
		a := f.actuatorOf(seeded, f.client)
		var pending *provider.SeedConfigPendingError
		if settings, _, err := a.creds.EntrySettings(f.current()); settings != nil || !errors.As(err, &pending) {
			t.Fatalf("entrySettings = %v, %v; want the pending error", settings, err)
		}
		if err := a.Migrate(ctx, logr.Discard(), f.current()); !errors.As(err, &pending) {
			t.Fatalf("Migrate = %v; want the pending error (retried)", err)
		}
		if c, ok := f.issuer.Valid(id); !ok || !c.RetireAt.IsZero() {
			t.Fatalf("while pending: credential valid %t, retiring at %v; want it untouched", ok, c.RetireAt)
		}
	})
}
