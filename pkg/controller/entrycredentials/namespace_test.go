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

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestTwoEntriesOfOneNamespaceInEitherOrder (issue 44, finding 9): the old and the new entry of
// a re-created shoot share its etcd-backup secret. In either order of their first reconciles,
// whichever of them rotates, and whichever is deleted: each pass publishes a credential of the
// entry's own prefix and says OwnPrefix of it; no pass revokes, retires or republishes the
// other entry's credential; a deletion revokes every credential of the deleted entry and none of
// the other's, which then publishes its own again.
func TestTwoEntriesOfOneNamespaceInEitherOrder(t *testing.T) {
	ctx := context.Background()
	const old, renewed = testEntry, testEntry + "0" // shoot--a--b--1, shoot--a--b--10: a sibling prefix
	for _, firstNew := range []bool{false, true} {
		for _, rotator := range []string{old, renewed} {
			for _, deleted := range []string{old, renewed} {
				name := fmt.Sprintf("first %s, %s rotates, %s deleted", map[bool]string{false: "old", true: "new"}[firstNew], rotator, deleted)
				t.Run(name, func(t *testing.T) {
					f := newEntryCredFixture(t, old, true)
					if err := f.client.Create(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: renewed}, Spec: f.current().Spec}); err != nil {
						t.Fatal(err)
					}
					first, second := old, renewed
					if firstNew {
						first, second = second, first
					}
					other := func(name string) string {
						if name == old {
							return renewed
						}
						return old
					}
					// latest is each entry's last published credential.
					latest := map[string]string{}
					owner := func(id string) string {
						c, ok := f.issuer.Valid(id)
						if !ok {
							return "revoked"
						}
						if !c.RetireAt.IsZero() {
							return "retiring"
						}
						return strings.TrimSuffix(c.Prefix, "/")
					}
					as := func(name string) { f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}} }
					// otherKept checks that the entry other than name still holds its latest credential.
					otherKept := func(name, after string) {
						t.Helper()
						if id, ok := latest[other(name)]; ok && owner(id) != other(name) {
							t.Fatalf("after %s: %s's credential %s is %s", after, other(name), id, owner(id))
						}
					}
					reconcileAs := func(name string) string {
						t.Helper()
						as(name)
						f.mustReconcile()
						id := f.published()
						if owner(id) != name {
							t.Fatalf("%s published %s, a credential of %q; want one of its own prefix", name, id, owner(id))
						}
						f.wantCondition(gardencorev1beta1.ConditionTrue, entrycredentials.ReasonOwnPrefix, id)
						otherKept(name, name+"'s pass")
						latest[name] = id
						return id
					}
					reconcileAs(first)
					reconcileAs(second)
					reconcileAs(first)

					// The rotation of one: a new credential of its own, the other's untouched.
					previous := latest[rotator]
					as(rotator)
					f.requestRotation("r1")
					if id := reconcileAs(rotator); id == previous {
						t.Fatalf("%s's rotation published its previous credential %s again", rotator, id)
					}
					// Whether the request is removed when the rotator did not hold the secret:
					// TestRotationRequestHonouredByAFreshIssuanceIsRemoved.
					reconcileAs(other(rotator))
					reconcileAs(rotator)

					// The deletion of one: every credential of its prefix revoked, none of the other's.
					as(deleted)
					if err := f.actuator().Delete(ctx, logr.Discard(), f.current()); err != nil {
						t.Fatalf("Delete of %s = %v", deleted, err)
					}
					for id, c := range f.issuer.Held() {
						if c.Prefix == deleted+"/" {
							t.Fatalf("the deleted %s's credential %s (%+v) is still valid", deleted, id, c)
						}
					}
					delete(latest, deleted)
					survivor := other(deleted)
					if id := latest[survivor]; owner(id) != survivor {
						t.Fatalf("after %s's deletion %s's credential %s is %s", deleted, survivor, id, owner(id))
					}
					// The secret is gone with the entry that wrote it last, or still the survivor's.
					as(survivor)
					s := &corev1.Secret{}
					switch err := f.client.Get(ctx, entryinfo.EtcdBackupSecretKey(f.be), s); {
					case apierrors.IsNotFound(err):
					case err != nil:
						t.Fatal(err)
					case string(s.Data["key"]) != latest[survivor]:
						t.Fatalf("after %s's deletion etcd-backup holds %q; want %s's %s", deleted, s.Data["key"], survivor, latest[survivor])
					}
					reconcileAs(survivor)
				})
			}
		}
	}
}

// TestRotationRequestHonouredByAFreshIssuanceIsRemoved: an entry whose rotation is requested
// while its shoot namespace's etcd-backup secret holds the other entry's record (or no record of
// it) issues and publishes a new credential of its own: the request is honoured, and removed.
// Before, Decide planned no Rotation for a fresh issuance (only for the recorded credential), so
// the request stayed, and the entry's next pass that found its own record rotated the credential
// it had just issued again.
func TestRotationRequestHonouredByAFreshIssuanceIsRemoved(t *testing.T) {
	ctx := context.Background()
	const old, renewed = testEntry, testEntry + "0"
	f := newEntryCredFixture(t, old, true)
	if err := f.client.Create(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: renewed}, Spec: f.current().Spec}); err != nil {
		t.Fatal(err)
	}
	as := func(name string) { f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	f.mustReconcile() // old
	previous := f.published()
	as(renewed)
	f.mustReconcile() // the secret holds the new entry's record
	as(old)
	f.requestRotation("r1")
	f.mustReconcile()
	rotated := f.published()
	if rotated == previous {
		t.Fatalf("the rotation published the previous credential %s again", previous)
	}
	if v, ok := f.current().Annotations[entrycredentials.AnnotationRotateCredentials]; ok {
		t.Fatalf("the honoured request %q is still on the entry: its next pass rotates %s again", v, rotated)
	}
	issued := f.issuer.Issuances()
	f.mustReconcile()
	if f.published() != rotated || f.issuer.Issuances() != issued {
		t.Fatalf("the next pass published %q after %d issuances; want %s kept, none issued", f.published(), f.issuer.Issuances()-issued, rotated)
	}
}

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
	f.issuer.Place = "fake:two"

	a, first, _, interleaved := f.siblingBetweenWriteAndRecord()
	if err := a.Reconcile(ctx, logr.Discard(), f.current()); err == nil || !*interleaved {
		t.Fatalf("the first entry's Reconcile = %v (interleaved: %v); want its record refused", err, *interleaved)
	}
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
	if _, ok := f.issuer.Valid(old); !ok {
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
	if n := f.issuer.Count(); n != 3 {
		t.Fatalf("the issuer holds %d credentials; want 3: the old one, the second entry's, the first entry's published (the refused pass's one revoked)", n)
	}
}
