// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"slices"
	"strings"
	"testing"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
)

// The hand-back and generated credentials (issue 36, finding 2; issue 43): the provider extension
// that takes a bucket back knows nothing of the credentials this extension generated, so a
// hand-back waits while one is valid, and revokes retiring ones itself once no secret on the
// seed that the bucket's shoots read holds anything but the operator's credentials.

// handBack sets the bucket's providerConfig to g (nil: no generated credentials) with handBack.
func (f *genFixture) handBack(g *credentials.Settings) {
	f.t.Helper()
	f.setConfig(controllertest.Config{Generated: g, HandBack: true})
}

// entry creates BackupEntry name of bucket, held by this extension's finalizer, with its
// secret garden/entry-<name> holding data, as gardenlet writes it.
func (f *genFixture) entry(name, bucket string, data map[string][]byte) {
	f.t.Helper()
	ref := corev1.SecretReference{Namespace: "garden", Name: "entry-" + name}
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{entryinfo.FinalizerName}},
		Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket, SecretRef: ref}}
	for _, o := range []client.Object{be, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Data: data}} {
		if err := f.client.Create(f.ctx, o); err != nil {
			f.t.Fatal(err)
		}
	}
}

// etcdBackup writes namespace/name as gardener's generic actuator does for entry createdBy: the
// entry secret's data with the bucket's name (the "mem" provider passes the data as it is).
func (f *genFixture) etcdBackup(namespace, name, createdBy string, data map[string][]byte) {
	f.t.Helper()
	d := map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(genBucket)}
	for k, v := range data {
		d[k] = v
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		Annotations: map[string]string{genericactuator.AnnotationKeyCreatedByBackupEntry: createdBy}}, Data: d}
	if err := f.client.Create(f.ctx, s); err != nil {
		if err := f.client.Update(f.ctx, s); err != nil {
			f.t.Fatal(err)
		}
	}
}

// setData replaces the data of secret namespace/name.
func (f *genFixture) setData(namespace, name string, data map[string][]byte) {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		f.t.Fatal(err)
	}
	s.Data = data
	if err := f.client.Update(f.ctx, s); err != nil {
		f.t.Fatal(err)
	}
}

// held says whether entry name still carries this extension's finalizer.
func (f *genFixture) held(name string) bool {
	f.t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Name: name}, be); err != nil {
		f.t.Fatal(err)
	}
	return slices.Contains(be.Finalizers, entryinfo.FinalizerName)
}

// expectWaiting checks a hand-back that waits: the pass succeeds (gardenlet keeps syncing the
// secrets it waits for), condition HandBack says status/reason with each of want, and the
// events since the last look are events (HandBackWaiting among them when the reason changed).
func (f *genFixture) expectWaiting(err error, status gardencorev1beta1.ConditionStatus, reason string, want []string, events ...string) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("a hand-back that waits failed the pass: %v (codes %v)", err, codes(err))
	}
	c := v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionHandBack)
	if c == nil || c.Status != status || c.Reason != reason {
		f.t.Fatalf("condition %s %+v; want %s/%s", ConditionHandBack, c, status, reason)
	}
	for _, w := range want {
		if !strings.Contains(c.Message, w) {
			f.t.Errorf("condition message %q does not say %q", c.Message, w)
		}
	}
	f.expectEvents(events...)
}

// settled ages a Settling HandBack condition past HandBackSettle, as the time passing does.
func (f *genFixture) settled() {
	f.t.Helper()
	bb := f.bucket()
	i := slices.IndexFunc(bb.Status.Conditions, func(c gardencorev1beta1.Condition) bool { return c.Type == ConditionHandBack })
	if i < 0 || bb.Status.Conditions[i].Reason != ReasonHandBackSettling {
		f.t.Fatalf("conditions %+v; want %s Settling", bb.Status.Conditions, ConditionHandBack)
	}
	c := &bb.Status.Conditions[i]
	c.LastUpdateTime = metav1.NewTime(c.LastUpdateTime.Add(-HandBackSettle))
	if err := f.client.Status().Update(f.ctx, bb); err != nil {
		f.t.Fatal(err)
	}
}

// expectHandedBack checks condition HandBack True/HandedBack.
func (f *genFixture) expectHandedBack() {
	f.t.Helper()
	if c := v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionHandBack); c == nil || c.Status != gardencorev1beta1.ConditionTrue || c.Reason != ReasonHandedBack {
		f.t.Fatalf("condition %s %+v; want True/%s", ConditionHandBack, c, ReasonHandedBack)
	}
}

// TestHandBackWhileGenerationIsOn: with generatedCredentials still in the providerConfig, a
// hand-back of a provider whose issuer makes identities of its own (aws IAM and MinIO users, GCP
// service-account keys, Keystone application credentials) waits (False/WaitingForSettings, the
// pass succeeds: issue 43), nothing revoked and no entry released; one whose issuer hands out the
// store's own keys (Azure's account keys, which provider-azure publishes and rotates itself) goes
// through with the key kept valid.
func TestHandBackWhileGenerationIsOn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		storeKeys bool
	}{
		{name: "aws, gcp, openstack: identities of their own", storeKeys: false},
		{name: "azure: keys of the store", storeKeys: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGenFixture(t, true)
			if tc.storeKeys {
				f.provider.storeKeys = map[string]bool{"mem": true}
				f.restart()
			}
			g := settings("mem", nil)
			f.configure(g)
			f.mustReconcile()
			f.expectPublished("cred-1", "mem")
			f.events()
			f.entry("shoot--p--s--1", genBucket, f.mustSecret().Data)

			f.handBack(g)
			err := f.reconcile()
			expectValid(t, f.mem, "cred-1")
			if tc.storeKeys {
				if err != nil {
					t.Fatalf("hand-back: %v", err)
				}
				f.expectHandedBack()
				if f.held("shoot--p--s--1") {
					t.Error("the entry still carries this extension's finalizer after the hand-back")
				}
				return
			}
			f.expectWaiting(err, gardencorev1beta1.ConditionFalse, ReasonHandBackSettings, []string{`"cred-1"`, "remove generatedCredentials"}, "Normal "+ReasonHandBackWaiting)
			if !f.held("shoot--p--s--1") {
				t.Error("a waiting hand-back released the entry")
			}
			f.expectPublished("cred-1", "mem")
			// Looked at again, it still waits, without a new event.
			f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionFalse, ReasonHandBackSettings, nil)
		})
	}
}

// TestHandBackRevokesRetiringCredentialsOnceNoSecretHoldsThem: generation switched off, the
// generated credential retires with its week of grace; a hand-back waits (nothing revoked, no
// entry released, the pass succeeds) while any secret on the seed that the bucket's shoots read
// -- an entry's secret, an etcd-backup or source-etcd-backup secret written from it -- holds
// something else than the operator's credentials, naming them; secrets of other buckets'
// entries, and an etcd-backup secret another entry wrote, do not count; an entry whose secret
// moved but whose etcd-backup did not is asked for a reconcile. Once none does, it settles
// (the kubelet's copy), then revokes the credential (the store refuses it), drops its record and
// releases the entries.
func TestHandBackRevokesRetiringCredentialsOnceNoSecretHoldsThem(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", nil))
	f.mustReconcile()
	generated := f.expectPublished("cred-1", "mem").Data
	f.entry("shoot--p--s--1", genBucket, generated)
	f.etcdBackup("shoot--p--s", "etcd-backup", "shoot--p--s--1", generated)
	f.entry("source-shoot--p--m--1", genBucket, generated)
	f.etcdBackup("shoot--p--m", "source-etcd-backup", "source-shoot--p--m--1", generated)
	f.entry("shoot--p--o--1", "other", generated)                           // another bucket's entry
	f.etcdBackup("shoot--p--o", "etcd-backup", "shoot--p--o--1", generated) // and its etcd-backup
	f.etcdBackup("shoot--p--m", "etcd-backup", "shoot--p--m--2", generated) // written by another entry
	f.entry("shoot--p--n--1", genBucket, generated)                         // no namespace, no etcd-backup
	f.events()

	// Generation switched off without handBack: the retirement starts, the operator's copy is
	// published (a succeeded reconcile: gardenlet syncs it to the entries only then).
	f.configure(nil)
	f.mustReconcile()
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)
	operator := f.mustSecret().Data
	if string(operator["key"]) != "operator" {
		t.Fatalf("the generated secret holds %v while retiring; want the operator's copy", operator)
	}
	f.setData("garden", "entry-shoot--p--n--1", operator) // this one has moved already
	f.events()

	f.handBack(nil)
	steps := []struct {
		what   string
		move   [][2]string // secrets gardenlet and the entries' reconciles have rewritten before
		want   []string
		nudged string // the entry asked for a reconcile
	}{
		{what: "nothing moved yet", want: []string{"4 secrets", "garden/entry-shoot--p--s--1", "shoot--p--s/etcd-backup", "garden/entry-source-shoot--p--m--1", "shoot--p--m/source-etcd-backup"}},
		{what: "the entries' secrets moved", move: [][2]string{{"garden", "entry-shoot--p--s--1"}, {"garden", "entry-source-shoot--p--m--1"}},
			want: []string{"2 secrets", "shoot--p--s/etcd-backup", "shoot--p--m/source-etcd-backup"}, nudged: "shoot--p--s--1"},
		{what: "one etcd-backup left", move: [][2]string{{"shoot--p--s", "etcd-backup"}}, want: []string{"1 secrets", "shoot--p--m/source-etcd-backup"}, nudged: "source-shoot--p--m--1"},
	}
	for i, step := range steps {
		for _, m := range step.move {
			data := operator
			if m[0] != "garden" {
				data = map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(genBucket), "key": operator["key"]}
			}
			f.setData(m[0], m[1], data)
		}
		err := f.reconcile()
		var events []string
		if i == 0 {
			events = []string{"Normal " + ReasonHandBackWaiting}
		}
		f.expectWaiting(err, gardencorev1beta1.ConditionProgressing, ReasonHandBackSecrets, append(step.want, `"cred-1"`), events...)
		if c := v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionHandBack); strings.Contains(c.Message, "shoot--p--o") || strings.Contains(c.Message, "shoot--p--m/etcd-backup") {
			t.Errorf("%s: the hand-back counts a secret that is not this bucket's entries': %v", step.what, c.Message)
		}
		expectValid(t, f.mem, "cred-1")
		if !f.held("shoot--p--s--1") {
			t.Fatalf("%s: a waiting hand-back released the entry", step.what)
		}
		if step.nudged != "" && !f.nudged(step.nudged) {
			t.Errorf("%s: entry %s, whose secret moved and whose etcd-backup did not, is not asked for a reconcile", step.what, step.nudged)
		}
		f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)
	}

	f.setData("shoot--p--m", "source-etcd-backup", map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(genBucket), "key": operator["key"]})
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackSettling, []string{`"cred-1"`}, "Normal "+ReasonHandBackWaiting)
	expectValid(t, f.mem, "cred-1") // the kubelet may not have updated the etcd pods' files yet
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackSettling, nil)
	f.settled()
	if err := f.reconcile(); err != nil {
		t.Fatalf("hand-back once no secret holds the generated credential: %v", err)
	}
	expectValid(t, f.mem)
	if err := f.mem.ForCredential(generated).PutObject(f.ctx, genBucket, "shoot--p--s--1/x", []byte("x")); err == nil {
		t.Fatal("the generated credential still writes after the hand-back")
	}
	c := f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	if !strings.Contains(c.Message, "hand-back") {
		t.Errorf("condition message %q does not say the hand-back revoked them", c.Message)
	}
	f.expectHandedBack()
	if s := f.mustSecret(); credentialIDs(s) != "" || hasAnnotation(s, AnnotationRetireAfter) {
		t.Errorf("the generated secret still records %v", s.Annotations)
	}
	f.expectEvents("Normal " + ReasonCredentialRevoked)
	for _, name := range []string{"shoot--p--s--1", "source-shoot--p--m--1"} {
		if f.held(name) {
			t.Errorf("entry %s still carries this extension's finalizer after the hand-back", name)
		}
	}
	if !f.held("shoot--p--o--1") {
		t.Error("the hand-back released another bucket's entry")
	}
	// Handed back: the next reconcile has nothing left to do.
	if err := f.reconcile(); err != nil {
		t.Fatalf("reconcile after the hand-back: %v", err)
	}
	f.expectHandedBack()
	// handBack removed (a later take-over): the condition goes with it.
	f.configure(nil)
	f.mustReconcile()
	if c := v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionHandBack); c != nil {
		t.Errorf("condition %s %+v stays without handBack", ConditionHandBack, c)
	}
}

// TestHandBackInTheSameChangeAsTheSwitchOff (issue 43): handBack set together with the removal
// of generatedCredentials starts the retirement (the operator's copy is published) and waits,
// the pass succeeding, so that gardenlet moves the entries; it then finishes by itself.
func TestHandBackInTheSameChangeAsTheSwitchOff(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", nil))
	f.mustReconcile()
	f.entry("shoot--p--s--1", genBucket, f.expectPublished("cred-1", "mem").Data)
	f.events()

	f.handBack(nil)
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackSecrets, []string{"1 secrets", "garden/entry-shoot--p--s--1"},
		"Normal "+ReasonRetiring, "Normal "+ReasonHandBackWaiting)
	expectValid(t, f.mem, "cred-1")
	s := f.mustSecret()
	if !hasAnnotation(s, AnnotationOperatorCopy) || s.Annotations[AnnotationRetireAfter] == "" {
		t.Fatalf("the waiting hand-back did not start the retirement: %v", s.Annotations)
	}
	f.setData("garden", "entry-shoot--p--s--1", s.Data) // gardenlet syncs the copy
	f.expectWaiting(f.reconcile(), gardencorev1beta1.ConditionProgressing, ReasonHandBackSettling, nil, "Normal "+ReasonHandBackWaiting)
	f.settled()
	f.mustReconcile()
	expectValid(t, f.mem)
	f.expectHandedBack()
	if f.held("shoot--p--s--1") {
		t.Error("the entry still carries this extension's finalizer after the hand-back")
	}
}

// nudged says whether entry name carries gardener's operation annotation (reconcile).
func (f *genFixture) nudged(name string) bool {
	f.t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Name: name}, be); err != nil {
		f.t.Fatal(err)
	}
	return be.Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.GardenerOperationReconcile
}
