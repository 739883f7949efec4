// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// fakeEntryIssuer is an in-memory entry issuer: a credential is valid while it is in creds.
type fakeEntryIssuer struct {
	mu        sync.Mutex
	location  string
	next      int
	creds     map[string]fakeEntryCred
	issueErr  error
	issuances int
	// limit, if set, is how many credentials an entry may have (IAM: two keys per user).
	limit int
	// retireErr, if set, fails RetireEntryCredentials.
	retireErr error
}

type fakeEntryCred struct {
	// location is where it lives: the issuer sees only those of its current location.
	location       string
	bucket, prefix string
	access         objectstore.EntryAccess
	retireAt       time.Time
}

func newFakeEntryIssuer() *fakeEntryIssuer {
	return &fakeEntryIssuer{location: "fake:one", creds: map[string]fakeEntryCred{}}
}

func (f *fakeEntryIssuer) IssueEntryCredential(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse []string) (objectstore.Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.creds {
		if c.location == f.location && c.bucket == bucket && c.prefix == prefix.String() && c.access == access && !slices.Contains(inUse, id) && !c.retireAt.After(time.Now()) {
			delete(f.creds, id)
		}
	}
	if f.issueErr != nil {
		return objectstore.Credential{}, f.issueErr
	}
	if f.limit > 0 && f.countOf(bucket, prefix, access) >= f.limit {
		return objectstore.Credential{}, fmt.Errorf("%w: the entry has %d credentials", objectstore.ErrQuotaExceeded, f.limit)
	}
	f.next++
	f.issuances++
	id := fmt.Sprintf("entry-cred-%d", f.next)
	f.creds[id] = fakeEntryCred{location: f.location, bucket: bucket, prefix: prefix.String(), access: access}
	return objectstore.Credential{ID: id, Data: map[string][]byte{"key": []byte(id)}}, nil
}

func (f *fakeEntryIssuer) RevokeEntryCredentials(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.creds {
		if c.location == f.location && c.bucket == bucket && c.prefix == prefix.String() && c.access == access && !slices.Contains(keep, id) {
			delete(f.creds, id)
		}
	}
	return nil
}

func (f *fakeEntryIssuer) RetireEntryCredentials(_ context.Context, _ string, _ objectstore.Prefix, _ objectstore.EntryAccess, ids []string, after time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.retireErr != nil {
		return f.retireErr
	}
	for _, id := range ids {
		if c, ok := f.creds[id]; ok && c.location == f.location {
			c.retireAt = after
			f.creds[id] = c
		}
	}
	return nil
}

func (f *fakeEntryIssuer) EndRetiredEntryCredentials(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	var next time.Time
	for id, c := range f.creds {
		switch {
		case c.location != f.location || c.bucket != bucket || c.prefix != prefix.String() || c.access != access || c.retireAt.IsZero():
		case c.retireAt.After(now):
			if next.IsZero() || c.retireAt.Before(next) {
				next = c.retireAt
			}
		default:
			delete(f.creds, id)
		}
	}
	return next, nil
}

func (f *fakeEntryIssuer) CredentialID(data map[string][]byte) string { return string(data["key"]) }

func (f *fakeEntryIssuer) Owns(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.creds[id]
	return ok && c.location == f.location && c.bucket == bucket && c.prefix == prefix.String() && c.access == access, nil
}

func (f *fakeEntryIssuer) Location(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.location, nil
}

func (f *fakeEntryIssuer) CredentialReach(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return fmt.Sprintf("%s of %q in %q only", access, prefix.String(), bucket)
}

// Headroom is unbounded: the fixture's quota is issueErr.
func (f *fakeEntryIssuer) Headroom(context.Context) (objectstore.Headroom, error) {
	return objectstore.Headroom{Unbounded: true}, nil
}

func (f *fakeEntryIssuer) SweepEntryCredentials(_ context.Context, bucket string, sweep objectstore.EntrySweep) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := 0
	for id, c := range f.creds {
		switch {
		case c.location != f.location || c.bucket != bucket:
		case sweep.Keeps(c.prefix, c.access) || (sweep.KeepRetiring && c.retireAt.After(time.Now())):
			kept++
		default:
			delete(f.creds, id)
		}
	}
	return kept, nil
}

func (f *fakeEntryIssuer) valid(id string) (fakeEntryCred, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.creds[id]
	return c, ok
}

func (f *fakeEntryIssuer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.creds)
}

// entryCredProvider is the fixture's provider whose etcd-backup secret keeps the entry secret's
// key names ("key"), as the real providers' do, so that a published secret reads back as one.
type entryCredProvider struct{ etcdProvider }

func (entryCredProvider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return map[string][]byte{"bucketName": data["bucketName"], "key": data["key"]}, nil
}

// entryCredFixture is the entry fixture with an entry issuer and entryCredentials set as asked.
type entryCredFixture struct {
	*entryFixture

	issuer *fakeEntryIssuer
}

func newEntryCredFixture(t *testing.T, name string, on bool) *entryCredFixture {
	t.Helper()
	f := &entryCredFixture{entryFixture: newEntryFixture(t, false), issuer: newFakeEntryIssuer()}
	f.provider.EntryIssuer = f.issuer
	if name != testEntry {
		old := f.be.DeepCopy()
		if err := f.client.Delete(context.Background(), old); err != nil {
			t.Fatal(err)
		}
		f.be = &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: old.Spec}
		if err := f.client.Create(context.Background(), f.be); err != nil {
			t.Fatal(err)
		}
	}
	f.switchTo(on)
	return f
}

// switchTo sets entryCredentials in the entry's providerConfig (gardenlet's copy of its bucket's).
func (f *entryCredFixture) switchTo(on bool) {
	var settings *credentials.EntrySettings
	if on {
		settings = &credentials.EntrySettings{Issuer: "fake"}
	}
	f.configure(settings)
}

// configure sets the entry's providerConfig to entryCredentials settings (nil: off).
func (f *entryCredFixture) configure(settings *credentials.EntrySettings) {
	cfg := controllertest.Config{Entry: settings}
	f.be = f.current()
	f.be.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(context.Background(), f.be); err != nil {
		f.t.Fatal(err)
	}
}

// allowBucketCredentialAtQuota switches entryCredentials on with the opt-in fallback at the
// store's quota.
func (f *entryCredFixture) allowBucketCredentialAtQuota() {
	cfg := controllertest.Config{Entry: &credentials.EntrySettings{Issuer: "fake", EntryGeneration: credentials.EntryGeneration{AllowBucketCredentialAtQuota: true}}}
	f.be = f.current()
	f.be.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(context.Background(), f.be); err != nil {
		f.t.Fatal(err)
	}
}

// actuator is the holding actuator as AddToManager builds it, with a fresh delegate: every call
// is a controller that just started, on the same API state.
func (f *entryCredFixture) actuator() *holdingActuator {
	d := newDelegate(provider.Register(entryCredProvider{f.provider}), f.client, f.client, f.recorder, options.DeletionOptions{})
	return &holdingActuator{Actuator: genericactuator.NewActuator(clientManager{c: f.client}, d), manager: clientManager{c: f.client}, client: f.client, reader: f.client, provider: d.provider, entries: d}
}

func (f *entryCredFixture) reconcile() error {
	f.be = f.current()
	return f.actuator().Reconcile(context.Background(), logr.Discard(), f.be)
}

func (f *entryCredFixture) mustReconcile() {
	f.t.Helper()
	if err := f.reconcile(); err != nil {
		f.t.Fatalf("Reconcile = %v", err)
	}
}

// etcdBackup reads the entry's etcd-backup secret.
func (f *entryCredFixture) etcdBackup() *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(context.Background(), entryinfo.EtcdBackupSecretKey(f.be), s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// record is the entry's record on its etcd-backup secret.
func (f *entryCredFixture) record() entryrecord.Record {
	f.t.Helper()
	r, _, err := entryrecord.Read(f.be.Name, f.etcdBackup().Annotations)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// changeRecord changes the entry's record on its etcd-backup secret.
func (f *entryCredFixture) changeRecord(change func(*entryrecord.Record)) {
	f.t.Helper()
	s := f.etcdBackup()
	r, _, err := entryrecord.Read(f.be.Name, s.Annotations)
	if err != nil {
		f.t.Fatal(err)
	}
	change(&r)
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	entryrecord.Write(s.Annotations, r)
	if err := f.client.Update(context.Background(), s); err != nil {
		f.t.Fatal(err)
	}
}

func (f *entryCredFixture) published() string { return string(f.etcdBackup().Data["key"]) }

func (f *entryCredFixture) condition() *gardencorev1beta1.Condition {
	return v1beta1helper.GetCondition(f.current().Status.Conditions, ConditionEntryCredentials)
}

func (f *entryCredFixture) wantCondition(status gardencorev1beta1.ConditionStatus, reason, says string) {
	f.t.Helper()
	c := f.condition()
	if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, says) {
		f.t.Fatalf("condition %+v; want %s/%s saying %q", c, status, reason, says)
	}
}

func (f *entryCredFixture) isolation(kind string) float64 {
	return testutil.ToFloat64(metrics.EntryIsolation.WithLabelValues(f.be.Name, kind))
}

// isolations are the isolation values of the entry's series set to 1 (one is expected).
func (f *entryCredFixture) isolations() []string {
	ch := make(chan prometheus.Metric, 100)
	metrics.EntryIsolation.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			f.t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entry"] == f.be.Name && d.GetGauge().GetValue() == 1 {
			out = append(out, labels["isolation"])
		}
	}
	return out
}

// TestEntryCredentialStates walks the states of an entry's own credential, each transition
// with a fresh actuator (a controller restart before every step).
func TestEntryCredentialStates(t *testing.T) {
	ctx := context.Background()
	t.Run("off: the bucket's credential, said so", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.mustReconcile()
		if f.published() != "value" || f.issuer.issuances != 0 {
			t.Fatalf("published %q after %d issuances; want the bucket's, none issued", f.published(), f.issuer.issuances)
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWide, "entryCredentials is not set")
		if f.isolation(metrics.IsolationBucketWide) != 1 {
			t.Fatal("metric: not bucket_wide")
		}
	})
	t.Run("issued, published, recorded; a reconcile keeps it", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		c, ok := f.issuer.valid(id)
		if !ok || c.prefix != testEntry+"/" || c.access != objectstore.EntryReadWrite || c.bucket != testBucket {
			t.Fatalf("published %q (%+v, valid %v); want a read-write credential of the entry's prefix", id, c, ok)
		}
		if p := f.record().Published; p == nil || p.ID != id || p.Issuer != "fake" || p.IssuedIn != "fake:one" || p.Access != "read-write" {
			t.Fatalf("record %+v; want the credential's record", f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, ReasonOwnPrefix, id)
		if f.isolation(metrics.IsolationOwnPrefix) != 1 {
			t.Fatal("metric: not own_prefix")
		}
		f.mustReconcile()
		if f.published() != id || f.issuer.issuances != 1 {
			t.Fatalf("second reconcile published %q after %d issuances; want %s kept", f.published(), f.issuer.issuances, id)
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
		if _, ok := f.issuer.valid(lost.ID); ok || f.published() == lost.ID || f.issuer.count() != 1 {
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
		if f.published() != id || f.issuer.issuances != 1 || f.record().Published == nil || f.record().Published.ID != id {
			t.Fatalf("published %q, %d issuances, record %+v; want %s kept and recorded again", f.published(), f.issuer.issuances, f.record(), id)
		}
		if _, ok := f.issuer.valid(id); !ok {
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
		if _, ok := f.issuer.valid(f.published()); !ok || f.issuer.issuances != 1 {
			t.Fatalf("published %q after %d issuances; want the entry's own, issued", f.published(), f.issuer.issuances)
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, ReasonOwnPrefix, f.published())
	})
	t.Run("switch off: the bucket's credential again, the entry's revoked", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.switchTo(false)
		f.mustReconcile()
		if _, ok := f.issuer.valid(id); ok || f.published() != "value" || f.record().Published != nil {
			t.Fatalf("after switching off: %s valid, published %q, record %+v", id, f.published(), f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWide, "entryCredentials is not set")
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
			if left := f.versions(testEntry + "/"); len(left) != 0 {
				t.Fatalf("objects left %v", left)
			}
			if _, ok := f.issuer.valid(id); ok {
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
		c, ok := f.issuer.valid(id)
		if !ok || c.retireAt.Before(before.Add(credentials.DefaultMigrationGracePeriod)) || c.retireAt.After(time.Now().Add(credentials.DefaultMigrationGracePeriod)) {
			t.Fatalf("after Migrate: valid %v, retires at %v; want valid until about now + %s", ok, c.retireAt, credentials.DefaultMigrationGracePeriod)
		}
		// The destination's first issuance (no record there) spares it while it retires.
		prefix, _ := objectstore.EntryPrefix(testEntry)
		if _, err := f.issuer.IssueEntryCredential(ctx, testBucket, prefix, objectstore.EntryReadWrite, nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.issuer.valid(id); !ok {
			t.Fatal("the migrated credential was revoked before its grace ended")
		}
	})
	t.Run("source- entry: a read-only credential in source-etcd-backup", func(t *testing.T) {
		f := newEntryCredFixture(t, "source-"+testEntry, true)
		f.mustReconcile()
		s := f.etcdBackup()
		c, ok := f.issuer.valid(string(s.Data["key"]))
		if s.Name != "source-etcd-backup" || !ok || c.access != objectstore.EntryReadOnly || c.prefix != testEntry+"/" {
			t.Fatalf("secret %s holds %q (%+v, valid %v); want a read-only credential of %s/", s.Name, s.Data["key"], c, ok, testEntry)
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, ReasonOwnPrefix, "read-only")
	})
	t.Run("at a quota: ERR_INFRA_QUOTA_EXCEEDED, the secret unchanged", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		id := f.published()
		f.issuer.issueErr = fmt.Errorf("creating IAM user: %w: the account has as many IAM users as AWS allows", objectstore.ErrQuotaExceeded)
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
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonNotIssued, "as many IAM users")
		if f.published() != "value" {
			t.Fatalf("published %q; want the secret unchanged", f.published())
		}
		_ = id
	})
	t.Run("at a quota with allowBucketCredentialAtQuota: the bucket's credential, said so; upgraded when headroom returns", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, false)
		f.allowBucketCredentialAtQuota()
		f.issuer.issueErr = fmt.Errorf("creating IAM user: %w: the account has as many IAM users as AWS allows", objectstore.ErrQuotaExceeded)
		f.events()
		f.mustReconcile()
		if f.published() != "value" {
			t.Fatalf("published %q; want the bucket's credential", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWideAtQuota, "allowBucketCredentialAtQuota published the bucket's")
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWideAtQuota, "as many IAM users")
		if got := f.isolations(); !slices.Equal(got, []string{metrics.IsolationBucketWideAtQuota}) {
			t.Fatalf("metric: the entry's isolation series %v; want bucket_wide_at_quota alone", got)
		}
		if ev := f.events(); !slices.ContainsFunc(ev, func(e string) bool { return strings.HasPrefix(e, "Warning "+ReasonEntryCredentialFallback) }) {
			t.Fatalf("events %v; want %s", ev, ReasonEntryCredentialFallback)
		}
		f.mustReconcile() // still at the quota: said once, not an event per pass
		if ev := f.events(); len(ev) != 0 {
			t.Fatalf("a second pass at the quota emitted %v", ev)
		}
		// Headroom returns: the next pass issues and publishes the entry's own.
		f.issuer.issueErr = nil
		f.mustReconcile()
		if _, ok := f.issuer.valid(f.published()); !ok {
			t.Fatalf("published %q with headroom again; want the entry's own credential", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionTrue, ReasonOwnPrefix, f.published())
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
		f.issuer.issueErr = fmt.Errorf("%w: the account is full", objectstore.ErrQuotaExceeded)
		f.mustReconcile()
		if _, ok := f.issuer.valid(id); ok || f.published() != "value" || f.record().Published != nil {
			t.Fatalf("%s valid %v, published %q, record %+v; want the bucket's published, the entry's revoked", id, ok, f.published(), f.record())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWideAtQuota, "the account is full")
	})
	t.Run("provider without an entry issuer: bucket-wide, said so", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.provider.EntryIssuer = nil
		f.mustReconcile()
		if f.published() != "value" {
			t.Fatalf("published %q; want the bucket's", f.published())
		}
		f.wantCondition(gardencorev1beta1.ConditionFalse, ReasonBucketWide, "cannot issue credentials that reach one prefix")
	})
	t.Run("issuer moved: the new one published, the old one not revoked elsewhere, kept on record", func(t *testing.T) {
		f := newEntryCredFixture(t, testEntry, true)
		f.mustReconcile()
		old := f.published()
		f.issuer.location = "fake:two"
		err := f.reconcile()
		var elsewhere *objectstore.CredentialElsewhereError
		if !errors.As(err, &elsewhere) || !slices.Equal(codes(err), []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
			t.Fatalf("Reconcile = %v (codes %v); want a CredentialElsewhereError, ERR_CONFIGURATION_PROBLEM", err, codes(err))
		}
		if _, ok := f.issuer.valid(old); !ok {
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
