// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// The providerConfigs of TestHandBackWithEntryCredentials (keys sorted: fixtures_test.go):
// per-entry credentials by MinIO; the hand-back alone; the hand-back with the switch-off.
const (
	entryConfig        = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"entryCredentials":{"issuer":"MinIO"},"kind":"BackupBucketConfig"}`
	entryHandBackAlone = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"entryCredentials":{"issuer":"MinIO"},"handBack":true,"kind":"BackupBucketConfig"}`
	handBackConfig     = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"handBack":true,"kind":"BackupBucketConfig"}`
)

// TestHandBackWithEntryCredentials (issue 43: a hand-back is a waiting state; issue 44: no entry
// principal outlives it), with gardenlet's real controllers and MinIO enforcing every
// credential. Two shoots' entries hold principals of their own; beside them, a force-deleted
// entry's principal and a retiring one (issued here as the entry controller issues them).
//
//   - The hand-back alone (entryCredentials still on): the core BackupBucket stays Succeeded
//     (before: ERR_CONFIGURATION_PROBLEM would have stopped gardenlet's sync; and without
//     generated credentials it went through, every principal left valid), the extension's
//     condition HandBack says False/WaitingForSettings naming entryCredentials, nothing is
//     revoked, and the entries keep this extension's finalizer (TestEntryDeletedWhileTheHandBackWaits).
//   - entryCredentials removed, handBack kept: with no other action, gardenlet hands the entries
//     the new providerConfig, their reconciles publish the operator's credentials and revoke their
//     own, and the hand-back sweeps the rest and finishes: HandedBack. No MinIO service account,
//     parent user or policy of the bucket is left; every entry credential is refused; each
//     etcd-backup secret works with the operator's credentials; the entries no longer carry this
//     extension's finalizer; every backup is still there; gardenlet shows every core object
//     Succeeded.
func TestHandBackWithEntryCredentials(t *testing.T) {
	requireStack(t)
	p := awsWorld(t)
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }

	bb := coreBucket(t, entryConfig)
	waitBucket(t, bb.Name, 2*time.Minute, "Succeeded", bucketSucceeded)
	operator := p.storeFor(t, p.operator())
	shoots := []shoot{newShoot(t), newShoot(t)}
	var creds []entryCredential
	var backups []string
	for _, s := range shoots {
		coreEntry(t, s, "", bb.Name, seedA, nil)
		waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded", entrySucceeded(""))
		creds = append(creds, publishedEntryCredential(t, p, p.a, s, "etcd-backup", objectstore.EntryReadWrite))
		backups = append(backups, framework.FillEntry(t, operator, bb.Name, s.entryName()+"/", 2)...)
	}
	issuer, err := (&awsprovider.Provider{}).NewEntryIssuer(ctx(), provider.Credentials{Data: p.operator(), Region: region}, &awsapi.BackupBucketConfig{}, awsapi.IssuerMinIO)
	if err != nil {
		t.Fatal(err)
	}
	for i, prefix := range []string{unique("shoot--gone--") + "--1", unique("shoot--away--") + "--1"} {
		pre, err := objectstore.EntryPrefix(prefix)
		if err != nil {
			t.Fatal(err)
		}
		cred, err := issuer.IssueEntryCredential(ctx(), bb.Name, pre, objectstore.EntryReadWrite, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 { // migrated away: retiring for an hour
			if err := issuer.RetireEntryCredentials(ctx(), bb.Name, pre, objectstore.EntryReadWrite, []string{cred.ID}, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := bucketPrincipals(t, bb.Name); len(got) != 4 {
		t.Fatalf("MinIO service accounts of the bucket before the hand-back: %v; want the two entries', the force-deleted one's and the retiring one's", got)
	}
	step("two entries with principals of their own, a force-deleted entry's and a retiring one beside them")

	// The hand-back alone.
	setCoreProviderConfig(t, bb, entryHandBackAlone)
	waitHandBack(t, bb.Name, 2*time.Minute, backupbucket.ReasonHandBackSettings, "remove entryCredentials")
	waitBucket(t, bb.Name, time.Minute, "Succeeded while the hand-back waits", bucketSucceeded)
	for i, s := range shoots {
		readsAndWrites(t, creds[i].store, bb.Name, s.entryName())
	}
	if got := bucketPrincipals(t, bb.Name); len(got) != 4 {
		t.Errorf("a hand-back that waits touched the principals: %v", got)
	}
	step("handBack alone: the bucket Succeeded, HandBack False/WaitingForSettings naming entryCredentials, nothing revoked")

	// The switch-off, handBack kept: nothing else is done by hand.
	setCoreProviderConfig(t, bb, handBackConfig)
	waitHandBack(t, bb.Name, 6*time.Minute, backupbucket.ReasonHandedBack, "no credential this extension generated or issued")
	step("entryCredentials removed: the hand-back finished by itself")

	if got := bucketPrincipals(t, bb.Name); len(got) != 0 {
		t.Errorf("MinIO service accounts of the bucket left after the hand-back: %v", got)
	}
	left, err := minio.Leftovers(ctx(), awsprovider.MinIOEntryParent(bb.Name), "gardener-backup-entries-"+bb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("MinIO holds %v of the bucket's entry parent after the hand-back; want nothing", left)
	}
	for i, s := range shoots {
		if err := listRefused(creds[i].store, bb.Name, s.entryName()); err != nil {
			t.Errorf("entry %s's own credential %s after the hand-back: %v", s.entryName(), creds[i].id, err)
		}
		etcdBackup := secretData(t, seed, s.technicalID(), "etcd-backup")
		if same, diff := sameCredentials(etcdBackup, p.operator()); !same {
			t.Errorf("etcd-backup of %s after the hand-back: %s", s.entryName(), diff)
		}
		readsAndWrites(t, p.storeFor(t, etcdBackup), bb.Name, s.entryName())
		if heldByUs(t, s.entryName()) {
			t.Errorf("entry %s still carries finalizer %s after the hand-back", s.entryName(), entryinfo.FinalizerName)
		}
		waitEntry(t, s.entryKey(), time.Minute, "gardenlet shows the entry Succeeded", entrySucceeded(""))
	}
	keys, err := conformance.ListKeys(ctx(), operator, bb.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range backups {
		if !slices.Contains(keys, k) {
			t.Errorf("backup %s is gone after the hand-back", k)
		}
	}
	waitBucket(t, bb.Name, time.Minute, "gardenlet shows the bucket Succeeded", bucketSucceeded)
	if ext := extensionBucket(t, bb.Name); ext.Annotations[backupbucket.AnnotationEntryIssuers] != "" {
		t.Errorf("the bucket still records entry issuers %q after the hand-back", ext.Annotations[backupbucket.AnnotationEntryIssuers])
	}
	step("nothing of the entries' principals left; etcd-backup works with the operator's credentials; entries released; backups kept")

	for _, s := range shoots {
		cur := &gardencorev1beta1.BackupEntry{}
		if err := garden.Get(ctx(), s.entryKey(), cur); err != nil {
			t.Fatal(err)
		}
		if err := garden.Delete(ctx(), cur); err != nil {
			t.Fatal(err)
		}
		waitGone(t, garden, cur, 2*time.Minute, "gardenlet deletes the entry")
	}
	if err := garden.Delete(ctx(), bb); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, bb, 2*time.Minute, "the core BackupBucket is deleted")
}

// bucketPrincipals lists the MinIO service accounts whose description names bucket (the entry
// issuer's marks: docs/entry-credentials.md), whoever created them.
func bucketPrincipals(t *testing.T, bucket string) []string {
	t.Helper()
	accounts, err := minio.ServiceAccounts(ctx())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range accounts {
		if strings.Contains(a.Description, "bucket="+bucket+" ") {
			out = append(out, a.AccessKey+" ("+a.Description+")")
		}
	}
	return out
}

// setCoreProviderConfig replaces the core BackupBucket's providerConfig, as an operator does
// where no incumbent runs (gardenlet copies it to the extension's objects).
func setCoreProviderConfig(t *testing.T, bb *gardencorev1beta1.BackupBucket, providerConfig string) {
	t.Helper()
	if err := garden.Get(ctx(), client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(providerConfig)}
	if err := garden.Update(ctx(), bb); err != nil {
		t.Fatal(err)
	}
}

// extensionBucket reads the extension BackupBucket name from seed a.
func extensionBucket(t *testing.T, name string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	ext := &extensionsv1alpha1.BackupBucket{}
	if err := seed.Get(ctx(), client.ObjectKey{Name: name}, ext); err != nil {
		t.Fatal(err)
	}
	return ext
}

// waitHandBack waits until the extension BackupBucket name on seed a has condition HandBack with
// reason and a message saying say; the core BackupBucket must not fail meanwhile.
func waitHandBack(t *testing.T, name string, timeout time.Duration, reason, say string) {
	t.Helper()
	eventually(t, timeout, "condition HandBack "+reason, func() (bool, string) {
		core := &gardencorev1beta1.BackupBucket{}
		if err := garden.Get(ctx(), client.ObjectKey{Name: name}, core); err != nil {
			return false, err.Error()
		}
		if le := core.Status.LastError; le != nil && slices.Contains(le.Codes, gardencorev1beta1.ErrorConfigurationProblem) {
			t.Fatalf("gardenlet shows the core BackupBucket failing with %s during the hand-back: %s", gardencorev1beta1.ErrorConfigurationProblem, le.Description)
		}
		c := v1beta1helper.GetCondition(extensionBucket(t, name).Status.Conditions, backupbucket.ConditionHandBack)
		if c == nil || c.Reason != reason || !strings.Contains(c.Message, say) {
			return false, fmt.Sprintf("condition %+v", c)
		}
		return true, ""
	})
}

// heldByUs says whether the extension BackupEntry name on seed a carries this extension's finalizer.
func heldByUs(t *testing.T, name string) bool {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := seed.Get(ctx(), client.ObjectKey{Name: name}, be); err != nil {
		t.Fatal(err)
	}
	return slices.Contains(be.Finalizers, entryinfo.FinalizerName)
}
