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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestARefusedRecordLosesNoCredentialToRevoke (issue 44, finding 9): the first entry of a shoot
// namespace publishes a new credential with its old one still to revoke (issued where the issuer
// no longer reaches); the second entry writes and records the secret before the first records.
// The first entry's record is refused, and its retry still has the old credential to revoke, on
// the record it writes then. Before, the pass's list of credentials still to revoke was on no
// record once the record was refused, and the retry forgot it: the old credential stayed valid
// with nothing naming it.
func TestARefusedRecordLosesNoCredentialToRevoke(t *testing.T) {
	ctx := context.Background()
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	old := f.published()
	f.issuer.location = "fake:two"

	first := f.be.Name
	second := testEntry + "0" // the same namespace, a sibling prefix
	if err := f.client.Create(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}, Spec: f.current().Spec}); err != nil {
		t.Fatal(err)
	}
	key := entryinfo.EtcdBackupSecretKey(f.be)
	// The first entry's settling reads the secret to record on it: the second entry's whole pass
	// runs just before that read, after the first entry's write.
	interleaved := false
	writer := interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok && k == key && !interleaved {
				interleaved = true
				f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}}
				f.mustReconcile()
			}
			return c.Get(ctx, k, obj, opts...)
		},
	})
	d := newDelegate(provider.Register(entryCredProvider{f.provider}), f.client, writer, f.recorder, options.DeletionOptions{})
	a := &holdingActuator{Actuator: genericactuator.NewActuator(clientManager{c: f.client}, d), manager: clientManager{c: f.client}, client: f.client, reader: f.client, provider: d.provider, entries: d}
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
	if err := a.Reconcile(ctx, logr.Discard(), f.current()); err == nil || !interleaved {
		t.Fatalf("the first entry's Reconcile = %v (interleaved: %v); want its record refused", err, interleaved)
	}
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
	if _, ok := f.issuer.valid(old); !ok {
		t.Fatal("the old credential was revoked where the issuer reaches now, not where it was issued")
	}

	// The retry writes the secret anew: its record still names the old credential to revoke.
	err := f.reconcile()
	var elsewhere *objectstore.CredentialElsewhereError
	if !errors.As(err, &elsewhere) {
		t.Fatalf("the retry = %v; want the old credential's revocation tried (a CredentialElsewhereError)", err)
	}
	r, ours, _ := entryrecord.Read(first, f.etcdBackup().Annotations)
	if !ours || r.Published == nil || r.Published.ID != f.published() || len(r.Unrevoked) != 1 || r.Unrevoked[0].ID != old {
		t.Fatalf("after the retry: the secret's record %+v (the first entry's: %v); want the published one and %s still to revoke", r, ours, old)
	}
	if n := f.issuer.count(); n != 3 {
		t.Fatalf("the issuer holds %d credentials; want 3: the old one, the second entry's, the first entry's published (the refused pass's one revoked)", n)
	}
}
