// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"testing"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials/credtest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The entry credentials themselves are tested in package entrycredentials; these tests check
// the actuator's wiring: when it calls them, and what their answer does to the entry's
// finalizer and objects.

// entryCredProvider is the fixture's provider whose etcd-backup secret keeps the entry secret's
// key names ("key"), as the real providers' do, so that a published secret reads back as one.
type entryCredProvider struct{ etcdProvider }

func (entryCredProvider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return map[string][]byte{"bucketName": data["bucketName"], "key": data["key"]}, nil
}

// wiringFixture is the entry fixture with an entry issuer and entryCredentials on.
type wiringFixture struct {
	*entryFixture

	issuer *credtest.Issuer
}

func newWiringFixture(t *testing.T) *wiringFixture {
	t.Helper()
	f := &wiringFixture{entryFixture: newEntryFixture(t, false), issuer: credtest.NewIssuer()}
	f.provider.EntryIssuer = f.issuer
	f.configure(controllertest.RawConfig(controllertest.Config{Entry: &credentials.EntrySettings{Issuer: "fake"}}))
	return f
}

func (f *wiringFixture) configure(raw *runtime.RawExtension) {
	f.t.Helper()
	f.be = f.current()
	f.be.Spec.ProviderConfig = raw
	if err := f.client.Update(context.Background(), f.be); err != nil {
		f.t.Fatal(err)
	}
}

func (f *wiringFixture) actuatorOf(p provider.Provider) *holdingActuator {
	d := newDelegate(p, f.client, f.client, f.recorder, options.DeletionOptions{})
	return &holdingActuator{Actuator: genericactuator.NewActuator(clientManager{c: f.client}, d), manager: clientManager{c: f.client}, client: f.client, reader: f.client, provider: p, entries: d}
}

func (f *wiringFixture) actuator() *holdingActuator {
	return f.actuatorOf(provider.Register(entryCredProvider{f.provider}))
}

// published reconciles the entry and returns the credential its etcd-backup secret holds, with
// its record.
func (f *wiringFixture) published() (string, entryrecord.Record) {
	f.t.Helper()
	if err := f.actuator().Reconcile(context.Background(), logr.Discard(), f.current()); err != nil {
		f.t.Fatalf("Reconcile = %v", err)
	}
	s := &corev1.Secret{}
	if err := f.client.Get(context.Background(), entryinfo.EtcdBackupSecretKey(f.be), s); err != nil {
		f.t.Fatal(err)
	}
	r, ours, err := entryrecord.Read(f.be.Name, s.Annotations)
	if err != nil || !ours {
		f.t.Fatalf("record %+v (ours %v): %v", r, ours, err)
	}
	return string(s.Data["key"]), r
}

// TestActuatorWiresTheEntryCredentials: a reconcile publishes and settles the entry's own
// credential (Data within gardener's write, Settle after it); a deletion revokes it once the
// objects are gone and only then releases the entry; a Migrate releases the entry once the
// credential is retired or cannot be retired from here; an answer that retries holds it.
func TestActuatorWiresTheEntryCredentials(t *testing.T) {
	ctx := context.Background()
	t.Run("reconcile: published and recorded", func(t *testing.T) {
		f := newWiringFixture(t)
		id, r := f.published()
		if _, ok := f.issuer.Valid(id); !ok || r.Published == nil || r.Published.ID != id || !f.held() {
			t.Fatalf("published %q (valid %v), record %+v, held %v; want the entry's own, recorded, the entry held", id, ok, r, f.held())
		}
	})
	t.Run("delete: the objects deleted, the credential revoked, the entry released", func(t *testing.T) {
		f := newWiringFixture(t)
		id, _ := f.published()
		if err := f.actuator().Delete(ctx, logr.Discard(), f.current()); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		if left := f.versions(testEntry + "/"); len(left) != 0 {
			t.Fatalf("objects left %v", left)
		}
		if _, ok := f.issuer.Valid(id); ok || f.held() {
			t.Fatalf("after Delete: %s valid %v, held %v; want it revoked and the entry released", id, ok, f.held())
		}
	})
	t.Run("delete with settings that cannot be read: held, the credential kept", func(t *testing.T) {
		f := newWiringFixture(t)
		id, _ := f.published()
		f.configure(&runtime.RawExtension{Raw: []byte(`{"entryCredentials":"yes"}`)})
		if err := f.actuator().Delete(ctx, logr.Discard(), f.current()); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Fatalf("Delete = %v; want the decode error", err)
		}
		if _, ok := f.issuer.Valid(id); !ok || !f.held() {
			t.Fatalf("the entry's credential %s valid: %t, held: %t; want both until the settings read", id, ok, f.held())
		}
	})
	t.Run("migrate: retired, the entry released", func(t *testing.T) {
		f := newWiringFixture(t)
		id, _ := f.published()
		if err := f.actuator().Migrate(ctx, logr.Discard(), f.current()); err != nil {
			t.Fatalf("Migrate = %v", err)
		}
		if c, ok := f.issuer.Valid(id); !ok || c.RetireAt.IsZero() || f.held() {
			t.Fatalf("after Migrate: %s valid %v retiring at %v, held %v; want it retiring and the entry released", id, ok, c.RetireAt, f.held())
		}
	})
	t.Run("migrate with no issuer to build: the entry released", func(t *testing.T) {
		f := newWiringFixture(t)
		f.published()
		f.provider.EntryIssuer = nil
		if err := f.actuator().Migrate(ctx, logr.Discard(), f.current()); err != nil {
			t.Fatalf("Migrate = %v; want the migration to go on", err)
		}
		if f.held() {
			t.Fatal("the entry is still held after Migrate")
		}
	})
	t.Run("migrate while the seed configuration is pending: held", func(t *testing.T) {
		f := newWiringFixture(t)
		id, _ := f.published()
		seeded, err := provider.WithSeedConfig(provider.Register(entryCredProvider{f.provider}), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		seeded.Await("the seed's Extension")
		var pending *provider.SeedConfigPendingError
		if err := f.actuatorOf(seeded).Migrate(ctx, logr.Discard(), f.current()); !errors.As(err, &pending) {
			t.Fatalf("Migrate = %v; want the pending error (retried)", err)
		}
		if c, ok := f.issuer.Valid(id); !ok || !c.RetireAt.IsZero() || !f.held() {
			t.Fatalf("while pending: credential valid %t, retiring at %v, held %t; want it untouched and held", ok, c.RetireAt, f.held())
		}
	})
}
