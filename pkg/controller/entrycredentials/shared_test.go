// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// TestRecordNeverOverwritesAnotherEntrysRecord (issue 44, finding 9): two entries of one shoot
// namespace write its etcd-backup secret; when the second writes and records between the first
// one's write and its record, the first does not overwrite the second's record, and retries.
// Before, it wrote its own record over the other's (losing the other's unrevoked and retiring
// credentials).
func TestRecordNeverOverwritesAnotherEntrysRecord(t *testing.T) {
	ctx := context.Background()
	f := newEntryCredFixture(t, testEntry, true)
	a, first, second, interleaved := f.siblingBetweenWriteAndRecord()
	err := a.Reconcile(ctx, logr.Discard(), f.current())
	if !*interleaved {
		t.Fatal("the second entry's pass did not run between the first one's write and its record")
	}
	if err == nil || !strings.Contains(err.Error(), "retried") {
		t.Fatalf("the first entry's Reconcile = %v; want an error that retries", err)
	}
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: second}}
	r, ours, _ := entryrecord.Read(second, f.etcdBackup().Annotations)
	if !ours || r.Published == nil || r.Published.ID != f.published() {
		t.Fatalf("the secret's record %+v (the second entry's: %v); want the second entry's, of the credential the secret holds %s", r, ours, f.published())
	}
	// The retry writes the secret anew and records the first entry's credential.
	f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: first}}
	f.mustReconcile()
	if r, ours, _ := entryrecord.Read(first, f.etcdBackup().Annotations); !ours || r.Published == nil || r.Published.ID != f.published() {
		t.Fatalf("after the retry: the secret's record %+v (the first entry's: %v); want the first entry's", r, ours)
	}
}

// TestRecordThatDoesNotDecodeFailsThePass: a record on the etcd-backup secret that does not
// decode fails the pass, which writes nothing and says why. Before, it read as an empty record:
// the credentials it named (still to revoke, retiring) were forgotten.
func TestRecordThatDoesNotDecodeFailsThePass(t *testing.T) {
	f := newEntryCredFixture(t, testEntry, true)
	f.mustReconcile()
	id := f.published()
	s := f.etcdBackup()
	s.Annotations[entryrecord.AnnotationEntryCredentialRecord] = `{"entry":"` + f.be.Name + `","unrevoked":[{"id":`
	if err := f.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(); err == nil || !strings.Contains(err.Error(), "does not decode") {
		t.Fatalf("Reconcile = %v; want the record that does not decode", err)
	}
	if got := f.etcdBackup(); string(got.Data["key"]) != id || got.Annotations[entryrecord.AnnotationEntryCredentialRecord] != s.Annotations[entryrecord.AnnotationEntryCredentialRecord] {
		t.Fatalf("etcd-backup holds %q with annotations %v; want it unchanged", got.Data["key"], got.Annotations)
	}
	f.wantCondition(gardencorev1beta1.ConditionFalse, entrycredentials.ReasonNotIssued, "does not decode")
}
