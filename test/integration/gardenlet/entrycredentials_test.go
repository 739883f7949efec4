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

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/minio/madmin-go/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The seed configurations (the providerConfig of the Seed's spec.extensions entry of type backup-aws,
// which gardenlet writes into the seed as the Extension garden/backup-aws: docs/migrating.md) of
// the two seeds of
// TestControlPlaneMigrationWithEntryCredentials: per-entry credentials by MinIO on both; an entry
// migrated away from seed a keeps its credential for an hour, one migrated away from seed b not
// at all. The buckets' providerConfig is the plain bucketConfig.
const (
	entrySeedConfigA = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\nentryCredentials:\n  issuer: MinIO\n  migrationGracePeriod: 1h\n"
	entrySeedConfigB = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\nentryCredentials:\n  issuer: MinIO\n  migrationGracePeriod: 0s\n"
	// entryGraceA is entrySeedConfigA's migrationGracePeriod.
	entryGraceA = time.Hour
)

// TestControlPlaneMigrationWithEntryCredentials is the control plane migration there and back
// (migrate, TestControlPlaneMigration) between two seeds whose extensions issue every entry a
// credential of its own (docs/entry-credentials.md), with gardenlet's real controllers and
// MinIO enforcing every credential:
//
//   - on seed a the entry's etcd-backup holds its own credential (not the bucket's), which
//     reaches its prefix and is refused another shoot's and the siblings' ("<entry>0/", "<entry>x/");
//   - a -> b: the source- entry's source-etcd-backup on b holds a read-only credential that reads
//     the source prefix and may neither write nor delete there; the entry's etcd-backup on b holds
//     its own credential on the target bucket; seed a's credential is retiring (seed a's grace of
//     an hour: still valid, with MinIO's expiration); the source entry's force-deletion revokes
//     the read-only credential;
//   - b -> a: seed b's credential ends at the Migrate (seed b's grace of 0s); seed a issues a new
//     one and spares its retiring one; the entry's deletion revokes every credential it has.
//
// At each step, every MinIO service account naming the entry's prefix is listed: only those
// expected exist.
func TestControlPlaneMigrationWithEntryCredentials(t *testing.T) {
	requireStack(t)
	binary, err := stack.BuildBinary(workDir, "aws")
	if err != nil {
		t.Fatal(err)
	}
	p := awsWorld(t)
	p.a = startTestSeed(t, "ec-seed-a", binary, &awsprovider.Provider{}, region, "--seed-extension-declared")
	p.b = startTestSeed(t, "ec-seed-b", binary, &awsprovider.Provider{}, region, "--seed-extension-declared")
	seedExtension(t, p.a, entrySeedConfigA)
	seedExtension(t, p.b, entrySeedConfigB)
	a, b := p.a, p.b
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }

	source := coreBucketFor(t, p.typ, p.region, p.operator(), a.name, bucketConfig)
	target := coreBucketFor(t, p.typ, p.region, p.operator(), b.name, bucketConfig)
	waitBucket(t, source.Name, 2*time.Minute, "Succeeded on "+a.name, bucketSucceeded)
	waitBucket(t, target.Name, 2*time.Minute, "Succeeded on "+b.name, bucketSucceeded)
	operator := p.storeFor(t, p.operator())

	s := newShootOn(t, a.client)
	coreEntry(t, s, "", source.Name, a.name, nil)
	waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded on "+a.name, entrySucceeded(""))
	entry := s.entryName()
	// The entry's backups on seed a, beside siblings whose names extend the entry's ("<entry>0/",
	// "<entry>x/") and another shoot's entry, in the same bucket.
	framework.FillEntry(t, operator, source.Name, entry+"/", 2)
	neighbour := unique("shoot--n--") + "--u"
	if err := operator.PutObject(ctx(), source.Name, neighbour+"/etcd-main/v2/Full-00000000-00000001-0", []byte("not ours")); err != nil {
		t.Fatal(err)
	}
	backups, err := conformance.ListKeys(ctx(), operator, source.Name, entry+"/")
	if err != nil || len(backups) != 2 {
		t.Fatalf("the entry's backups: %v, %v", backups, err)
	}

	onA := publishedEntryCredential(t, p, a, s, "etcd-backup", objectstore.EntryReadWrite)
	readsAndWrites(t, onA.store, source.Name, entry)
	for _, other := range []string{neighbour, entry + "0", entry + "x"} {
		refusedAt(t, onA.store, source.Name, other, "seed a's credential of "+entry)
	}
	principals(t, entry, map[string]string{onA.id: "read-write on " + source.Name})
	step(a.name + ": the entry's own credential in etcd-backup; its prefix reached, the neighbour's and the siblings' refused")

	// There: a -> b.
	src, _, _ := migrate(t, s, a, b, source.Name, target.Name)
	readsAndWrites(t, onA.store, source.Name, entry) // retiring, within seed a's grace
	sourceCred := publishedEntryCredential(t, p, b, s, "source-etcd-backup", objectstore.EntryReadOnly)
	for _, key := range backups {
		if _, err := objectstore.ReadObject(ctx(), sourceCred.store, source.Name, key); err != nil {
			t.Errorf("the source entry's read-only credential reading %s: %v", key, err)
		}
	}
	if keys, err := conformance.ListKeys(ctx(), sourceCred.store, source.Name, entry+"/"); err != nil || len(keys) < len(backups) {
		t.Errorf("the source entry's read-only credential listing %s/: %v, %v", entry, keys, err)
	}
	if err := sourceCred.store.PutObject(ctx(), source.Name, entry+"/etcd-main/written-by-source", []byte("x")); !conformance.Refused(err) {
		t.Errorf("the source entry's read-only credential writing under %s/: %v; want refused", entry, err)
	}
	deleteRefused(t, sourceCred.store, source.Name, backups[0], "the source entry's read-only credential")
	refusedAt(t, sourceCred.store, source.Name, neighbour, "the source entry's read-only credential")
	onB := publishedEntryCredential(t, p, b, s, "etcd-backup", objectstore.EntryReadWrite)
	readsAndWrites(t, onB.store, target.Name, entry)
	refusedAt(t, onB.store, source.Name, entry, "seed b's credential on the source bucket")
	principals(t, entry, map[string]string{
		onA.id: "read-write on " + source.Name + ", retiring", sourceCred.id: "read-only on " + source.Name, onB.id: "read-write on " + target.Name,
	})
	step(a.name + " -> " + b.name + ": read-only source-etcd-backup, the target's own credential, seed a's retiring and still valid")

	// etcd's copy into the target (etcd-druid's job), then the shoot flow force-deletes the source entry.
	copied := entry + "/etcd-main/v2/Full-00000001-00000010-1"
	if err := onB.store.PutObject(ctx(), target.Name, copied, []byte("copy")); err != nil {
		t.Fatal(err)
	}
	forceDeleteSource(t, b, s, src)
	if err := listRefused(sourceCred.store, source.Name, entry); err != nil {
		t.Errorf("the deleted source entry's read-only credential: %v", err)
	}
	principals(t, entry, map[string]string{onA.id: "read-write on " + source.Name + ", retiring", onB.id: "read-write on " + target.Name})
	step("the source entry force-deleted on " + b.name + ": its read-only credential revoked")

	// And back: b -> a, onto the source bucket again.
	src, _, _ = migrate(t, s, b, a, target.Name, source.Name)
	if err := listRefused(onB.store, target.Name, entry); err != nil {
		t.Errorf("seed b's credential after the migration with a grace of 0s: %v", err)
	}
	backCred := publishedEntryCredential(t, p, a, s, "source-etcd-backup", objectstore.EntryReadOnly)
	if _, err := objectstore.ReadObject(ctx(), backCred.store, target.Name, copied); err != nil {
		t.Errorf("the source entry's read-only credential on %s reading %s in %s: %v", a.name, copied, target.Name, err)
	}
	if err := backCred.store.PutObject(ctx(), target.Name, entry+"/etcd-main/written-by-source", []byte("x")); !conformance.Refused(err) {
		t.Errorf("the source entry's read-only credential on %s writing in %s: %v; want refused", a.name, target.Name, err)
	}
	readsAndWrites(t, onA.store, source.Name, entry) // still retiring, spared by seed a's new issuance
	onA2 := publishedEntryCredential(t, p, a, s, "etcd-backup", objectstore.EntryReadWrite)
	if onA2.id == onA.id {
		t.Errorf("back on %s the entry publishes its retiring credential %s again; want a new one", a.name, onA.id)
	}
	readsAndWrites(t, onA2.store, source.Name, entry)
	forceDeleteSource(t, a, s, src)
	if err := listRefused(backCred.store, target.Name, entry); err != nil {
		t.Errorf("the deleted source entry's read-only credential (on %s): %v", target.Name, err)
	}
	principals(t, entry, map[string]string{onA.id: "read-write on " + source.Name + ", retiring", onA2.id: "read-write on " + source.Name})
	step(b.name + " -> " + a.name + ": seed b's credential ended at once, a new one on seed a, the retiring one spared")

	// The entry's deletion revokes every credential of it, the retiring one too.
	cur := &gardencorev1beta1.BackupEntry{}
	if err := garden.Get(ctx(), s.entryKey(), cur); err != nil {
		t.Fatal(err)
	}
	if err := garden.Delete(ctx(), cur); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, cur, 2*time.Minute, "gardenlet ("+a.name+") deletes the entry")
	for _, c := range []entryCredential{onA, onA2} {
		if err := listRefused(c.store, source.Name, entry); err != nil {
			t.Errorf("credential %s after the entry's deletion: %v", c.id, err)
		}
	}
	principals(t, entry, nil)
	step("the entry deleted: no principal of it is left")
	for _, bb := range []*gardencorev1beta1.BackupBucket{source, target} {
		if err := garden.Delete(ctx(), bb); err != nil {
			t.Fatal(err)
		}
	}
	for _, bb := range []*gardencorev1beta1.BackupBucket{source, target} {
		waitGone(t, garden, bb, 2*time.Minute, "the core BackupBucket is deleted")
	}
}

// seedExtension writes the seed's Extension garden/backup-aws with providerConfig content (YAML),
// as gardenlet does for the Seed's spec.extensions entry of that type, and waits until the
// extension applied it.
func seedExtension(t *testing.T, w *seedWorld, content string) {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	ex := &extensionsv1alpha1.Extension{
		ObjectMeta: metav1.ObjectMeta{Namespace: gardenNamespace, Name: "backup-aws", Annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}},
		Spec: extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{
			Type: "backup-aws", Class: new(extensionsv1alpha1.ExtensionClassSeed), ProviderConfig: &runtime.RawExtension{Raw: raw},
		}},
	}
	if err := w.client.Create(t.Context(), ex); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the seed's Extension is applied", func() (bool, string) {
		if err := w.client.Get(t.Context(), client.ObjectKeyFromObject(ex), ex); err != nil {
			return false, err.Error()
		}
		op := ex.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && ex.Status.ObservedGeneration == ex.Generation, fmt.Sprintf("last operation %+v", op)
	})
}

// entryCredential is an entry's own credential as published in a secret, with a store using it.
type entryCredential struct {
	id    string
	store conformance.Stores
}

// publishedEntryCredential asserts that the shoot's secret on w holds an entry's own credential
// of access, recorded on the secret (ID, issuer MinIO, access), not the operator's, and that the
// extension BackupEntry's EntryCredentials condition is True naming it.
func publishedEntryCredential(t *testing.T, p *providerWorld, w *seedWorld, s shoot, secretName string, access objectstore.EntryAccess) entryCredential {
	t.Helper()
	secret := &corev1.Secret{}
	if err := w.client.Get(ctx(), client.ObjectKey{Namespace: s.technicalID(), Name: secretName}, secret); err != nil {
		t.Fatalf("%s/%s on %s: %v", s.technicalID(), secretName, w.name, err)
	}
	id := string(secret.Data["accessKeyID"])
	if id == "" || id == string(p.operator()["accessKeyID"]) {
		t.Fatalf("%s on %s holds the bucket's credential (annotations %v); want the entry's own", secretName, w.name, secret.Annotations)
	}
	if got := recordedOn(secret); got == nil || got.ID != id || got.Issuer != awsapi.IssuerMinIO || got.Access != access {
		t.Errorf("%s on %s holds %s recorded as %+v; want it recorded with issuer MinIO and access %s", secretName, w.name, id, got, access)
	}
	name := s.entryName()
	if access == objectstore.EntryReadOnly {
		name = v1beta1constants.BackupSourcePrefix + "-" + name
	}
	ext := &extensionsv1alpha1.BackupEntry{}
	if err := w.client.Get(ctx(), client.ObjectKey{Name: name}, ext); err != nil {
		t.Fatalf("the extension BackupEntry %s on %s: %v", name, w.name, err)
	}
	if c := v1beta1helper.GetCondition(ext.Status.Conditions, backupentry.ConditionEntryCredentials); c == nil || c.Status != gardencorev1beta1.ConditionTrue || !strings.Contains(c.Message, id) {
		t.Errorf("condition %s of %s on %s: %+v; want True naming %s", backupentry.ConditionEntryCredentials, name, w.name, c, id)
	}
	return entryCredential{id: id, store: p.storeFor(t, secret.Data)}
}

// readsAndWrites asserts that store writes, reads, lists and deletes under entry/ of bucket.
func readsAndWrites(t *testing.T, store conformance.Stores, bucket, entry string) {
	t.Helper()
	key := entry + "/etcd-main/probe-" + unique("")
	if err := store.PutObject(ctx(), bucket, key, []byte("x")); err != nil {
		t.Fatalf("writing %s in %s: %v", key, bucket, err)
	}
	if _, err := objectstore.ReadObject(ctx(), store, bucket, key); err != nil {
		t.Errorf("reading %s in %s: %v", key, bucket, err)
	}
	if keys, err := conformance.ListKeys(ctx(), store, bucket, entry+"/"); err != nil || !slices.Contains(keys, key) {
		t.Errorf("listing %s/ in %s: %v, %v; want %s among them", entry, bucket, keys, err, key)
	}
	if failed, err := store.DeleteObjects(ctx(), bucket, []objectstore.ObjectVersion{{Key: key}}); err != nil || len(failed) > 0 {
		t.Errorf("deleting %s in %s: %v %v", key, bucket, failed, err)
	}
}

// refusedAt asserts that store (who) may neither read, list, write nor delete under prefix/ of bucket.
func refusedAt(t *testing.T, store conformance.Stores, bucket, prefix, who string) {
	t.Helper()
	if _, err := conformance.ListKeys(ctx(), store, bucket, ""); !conformance.Refused(err) {
		t.Errorf("%s listing the whole bucket %s: %v; want refused", who, bucket, err)
	}
	if err := listRefused(store, bucket, prefix); err != nil {
		t.Errorf("%s: %v", who, err)
	}
	if err := store.PutObject(ctx(), bucket, prefix+"/etcd-main/intruder", []byte("x")); !conformance.Refused(err) {
		t.Errorf("%s writing under %s/ of %s: %v; want refused", who, prefix, bucket, err)
	}
	if _, err := objectstore.ReadObject(ctx(), store, bucket, prefix+"/etcd-main/v2/Full-00000000-00000001-0"); !conformance.Refused(err) {
		t.Errorf("%s reading under %s/ of %s: %v; want refused", who, prefix, bucket, err)
	}
	deleteRefused(t, store, bucket, prefix+"/etcd-main/v2/Full-00000000-00000001-0", who)
}

// listRefused is nil when store's listing of prefix/ in bucket is refused.
func listRefused(store conformance.Stores, bucket, prefix string) error {
	_, err := conformance.ListKeys(ctx(), store, bucket, prefix+"/")
	switch {
	case conformance.Refused(err):
		return nil
	case err == nil:
		return fmt.Errorf("listing %s/ in %s succeeded; want refused", prefix, bucket)
	default:
		return fmt.Errorf("listing %s/ in %s: %w; want refused", prefix, bucket, err)
	}
}

// deleteRefused asserts that store (who) may not delete key of bucket.
func deleteRefused(t *testing.T, store conformance.Stores, bucket, key, who string) {
	t.Helper()
	failed, err := store.DeleteObjects(ctx(), bucket, []objectstore.ObjectVersion{{Key: key}})
	if err == nil && (len(failed) != 1 || !conformance.Refused(failed[0].Err)) {
		t.Errorf("%s deleting %s in %s: %v; want refused", who, key, bucket, failed)
	} else if err != nil && !conformance.Refused(err) {
		t.Errorf("%s deleting %s in %s: %v; want refused", who, key, bucket, err)
	}
}

// principals asserts that the MinIO service accounts naming entry's prefix (in their
// description, docs/entry-credentials.md) are exactly want (access key -> what it is, for the
// message), whoever created them.
func principals(t *testing.T, entry string, want map[string]string) {
	t.Helper()
	accounts, err := minio.ServiceAccounts(ctx())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range accounts {
		if strings.Contains(a.Description, "prefix="+entry+"/ ") {
			got[a.AccessKey] = a.Description
			if a.Expiration != nil && a.Expiration.Unix() > 0 {
				got[a.AccessKey] += ", expires " + a.Expiration.UTC().Format(time.RFC3339)
			}
		}
	}
	for id, what := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("the entry's credential %s (%s) is not among its MinIO service accounts %v", id, what, got)
		}
		if strings.HasSuffix(what, "retiring") {
			assertRetiring(t, accounts, id)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("MinIO service account %s (%s) of the entry is left; want only %v", id, got[id], want)
		}
	}
}

// assertRetiring asserts that the service account id of accounts ends within seed a's grace
// (MinIO's expiration, set by seed a's Migrate).
func assertRetiring(t *testing.T, accounts []madmin.ServiceAccountInfo, id string) {
	t.Helper()
	for _, a := range accounts {
		if a.AccessKey != id {
			continue
		}
		if a.Expiration == nil || a.Expiration.Unix() <= 0 || !a.Expiration.After(time.Now()) || a.Expiration.After(time.Now().Add(entryGraceA)) {
			t.Errorf("the retiring credential %s expires at %v; want within seed a's grace of %s from now", id, a.Expiration, entryGraceA)
		}
	}
}

// recordedOn is the published credential that secret's record names, of the entry that wrote the
// secret last (nil: none).
func recordedOn(secret *corev1.Secret) *entryrecord.Credential {
	r, _, _ := entryrecord.Read(secret.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry], secret.Annotations)
	return r.Published
}
