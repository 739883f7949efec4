// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials/credtest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// errInjected is the harness's failure of a mutating call.
var errInjected = errors.New("injected: the call did not happen")

// mutations counts the mutating calls of a run, every issuer call that changes what it holds
// and every API write, and fails the k-th (k 0: none): alone (a call that failed), or with every
// later one (cut: a killed process makes no further call).
type mutations struct {
	k, n  int
	cut   bool
	calls []string
}

func (m *mutations) call(op string) error {
	m.n++
	m.calls = append(m.calls, op)
	if m.k > 0 && (m.n == m.k || (m.cut && m.n > m.k)) {
		return fmt.Errorf("%s: %w", op, errInjected)
	}
	return nil
}

// writer is c with every write counted (and failed) by m.
func (m *mutations) writer(c client.WithWatch) client.WithWatch {
	kind := func(obj client.Object) string { return fmt.Sprintf("%T", obj) }
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := m.call("create " + kind(obj)); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := m.call("update " + kind(obj)); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := m.call("patch " + kind(obj)); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := m.call("delete " + kind(obj)); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := m.call("update " + kind(obj) + "/" + sub); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := m.call("patch " + kind(obj) + "/" + sub); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// restartStep is one operation of the controller in a scenario: world, once before its first
// attempt, changes what the controller does not (a migration's new namespace); run is one
// attempt, retried after an error as the controller's requeue does.
type restartStep struct {
	name  string
	world func(f *entryCredFixture)
	run   func(ctx context.Context, a *passes, be *extensionsv1alpha1.BackupEntry) error
}

func reconcileStep(name string) restartStep {
	return restartStep{name: name, run: func(ctx context.Context, a *passes, be *extensionsv1alpha1.BackupEntry) error {
		return a.Reconcile(ctx, logr.Discard(), be)
	}}
}

// restartScenario is what the harness cuts: setup brings the entry to the start (with no fault),
// steps are the operations whose mutating calls are cut.
type restartScenario struct {
	name  string
	setup func(f *entryCredFixture)
	steps []restartStep
	// own: the entry ends with its own credential published; else with none of its own (switched
	// off, or deleted).
	own bool
	// deleted: the entry is gone at the end (no reconcile is run after the steps).
	deleted bool
	// check, if set, checks the end state further.
	check func(t *testing.T, f *entryCredFixture)
	// retires: the credential the entry published before the steps stays valid, retiring, until
	// the graces have passed (a rotation's previous one, a migration's source's).
	retires bool
}

// short is entryCredentials with a rotation period of a day, a grace of an hour and a
// migration grace of an hour: the harness's clock passes both.
func short() *credentials.EntrySettings {
	s := rotating(time.Hour)
	s.MigrationGracePeriod = &metav1.Duration{Duration: time.Hour}
	return s
}

// others are credentials of other entries the issuer holds beside the entry's: a sibling
// prefix's (the re-created shoot's entry shoot--a--b--10), the source- entry's read-only one of
// the same prefix, and the same prefix in another bucket.
var others = []struct {
	bucket, prefix string
	access         objectstore.EntryAccess
}{
	{testBucket, testEntry + "0", objectstore.EntryReadWrite},
	{testBucket, testEntry, objectstore.EntryReadOnly},
	{"another-bucket", testEntry, objectstore.EntryReadWrite},
}

func restartScenarios() []restartScenario {
	migrate := restartStep{name: "Migrate on the source", run: func(ctx context.Context, a *passes, be *extensionsv1alpha1.BackupEntry) error {
		return a.Migrate(ctx, logr.Discard(), be)
	}}
	destination := reconcileStep("the destination's first pass")
	destination.world = func(f *entryCredFixture) {
		// The shoot's namespace on the destination seed has no etcd-backup secret yet.
		if err := f.client.Delete(context.Background(), f.etcdBackup()); err != nil {
			f.t.Fatal(err)
		}
	}
	deletion := restartStep{name: "Delete", run: func(ctx context.Context, a *passes, be *extensionsv1alpha1.BackupEntry) error {
		return a.Delete(ctx, logr.Discard(), be)
	}}
	return []restartScenario{
		{name: "first issuance", setup: func(f *entryCredFixture) { f.configure(short()) },
			steps: []restartStep{reconcileStep("the first pass")}, own: true},
		{name: "rotation by request", setup: func(f *entryCredFixture) {
			f.configure(short())
			f.mustReconcile()
			f.requestRotation("r1")
		}, steps: []restartStep{reconcileStep("the rotating pass")}, own: true, retires: true,
			check: func(t *testing.T, f *entryCredFixture) {
				if v, ok := f.current().Annotations[entrycredentials.AnnotationRotateCredentials]; ok {
					t.Fatalf("the honoured request %q is still on the entry", v)
				}
			}},
		{name: "rotation by period, with a grace", setup: func(f *entryCredFixture) {
			f.configure(short())
			f.mustReconcile()
			f.age(time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339))
		}, steps: []restartStep{reconcileStep("the rotating pass")}, own: true, retires: true,
			check: func(t *testing.T, f *entryCredFixture) {
				if at := f.record().Published.IssuedAt; time.Since(at) > time.Hour {
					t.Fatalf("the published credential was issued at %v: not rotated", at)
				}
			}},
		{name: "migration", setup: func(f *entryCredFixture) {
			f.configure(short())
			f.mustReconcile()
		}, steps: []restartStep{migrate, destination}, own: true, retires: true},
		{name: "switch-off", setup: func(f *entryCredFixture) {
			f.configure(short())
			f.mustReconcile()
			f.switchTo(false)
		}, steps: []restartStep{reconcileStep("the pass switched off")}},
		{name: "deletion, with a credential retiring", setup: func(f *entryCredFixture) {
			f.configure(short())
			f.mustReconcile()
			f.requestRotation("r1")
			f.mustReconcile()
		}, steps: []restartStep{deletion}, deleted: true,
			check: func(t *testing.T, f *entryCredFixture) {
				if err := f.client.Get(context.Background(), entryinfo.EtcdBackupSecretKey(f.be), &corev1.Secret{}); !apierrors.IsNotFound(err) {
					t.Fatalf("the deleted entry's etcd-backup secret: %v; want it gone", err)
				}
			}},
	}
}

// TestRestartBetweenAnyTwoSteps (issue 44): for every scenario and every k up to the number of
// mutating calls of its clean run, the k-th call fails (alone, or with every later one, as a
// killed process), then a controller that just started runs until steady. Whatever k, the
// published etcd-backup credential is valid; every other credential the issuer holds for the
// entry is retiring with a time, or named by the record or the intent for a later pass to
// revoke; once the graces have passed the issuer holds the published one alone (a deleted or
// switched-off entry: none); no other entry's credential is touched.
func TestRestartBetweenAnyTwoSteps(t *testing.T) {
	for _, s := range restartScenarios() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel() // each run has a fixture of its own; the metrics are not checked here
			clean := runRestart(t, s, &mutations{})
			if len(clean.calls) == 0 {
				t.Fatal("the clean run made no mutating call: the harness would cut nothing")
			}
			t.Logf("%d mutating calls: %v", len(clean.calls), clean.calls)
			for _, cut := range []bool{false, true} {
				for k := 1; k <= len(clean.calls); k++ {
					m := &mutations{k: k, cut: cut}
					mode := "failed"
					if cut {
						mode = "cut off"
					}
					t.Run(fmt.Sprintf("call %d (%s) %s", k, clean.calls[k-1], mode), func(t *testing.T) {
						runRestart(t, s, m)
						if m.n < k {
							t.Fatalf("the run made %d mutating calls; the clean one made %d: call %d was never reached", m.n, len(clean.calls), k)
						}
					})
				}
			}
		})
	}
}

// runRestart runs scenario s with m cutting its steps, then fresh controllers until steady,
// and checks the invariants; it returns m.
func runRestart(t *testing.T, s restartScenario, m *mutations) *mutations {
	t.Helper()
	ctx := context.Background()
	f := newEntryCredFixture(t, testEntry, true)
	var skew time.Duration
	f.issuer.Now = func() time.Time { return time.Now().Add(skew) }
	for _, o := range others {
		prefix, err := objectstore.EntryPrefix(o.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.issuer.IssueEntryCredential(ctx, o.bucket, prefix, o.access, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := f.issuer.Held()
	s.setup(f)
	f.events()
	var previous string
	if s.retires {
		previous = f.published()
	}

	// The run m cuts: a step that fails is where the restarted controller takes up.
	faulty := &passes{p: f.registered(), client: m.writer(f.client)}
	faulty.creds = entrycredentials.New(faulty.p, f.client, faulty.client, f.recorder)
	f.issuer.Fault = m.call
	resume := len(s.steps)
	for i, step := range s.steps {
		if step.world != nil {
			step.world(f)
		}
		err := step.run(ctx, faulty, f.current())
		f.events()
		if err != nil || (m.cut && m.k > 0 && m.n >= m.k) {
			resume = i
			break
		}
	}
	f.issuer.Fault = nil

	// The restarted controller: each attempt a new Credentials on the API server as it is.
	for i := resume; i < len(s.steps); i++ {
		if i > resume && s.steps[i].world != nil {
			s.steps[i].world(f)
		}
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			if err = s.steps[i].run(ctx, f.actuator(), f.current()); err == nil {
				break
			}
			f.events()
		}
		f.events()
		if err != nil {
			t.Fatalf("%s after the restart: %v", s.steps[i].name, err)
		}
	}
	if !s.deleted {
		steady(t, f)
	}
	checkRestart(t, f, s, before, false)
	if c, ok := f.issuer.Valid(previous); s.retires && (!ok || c.RetireAt.IsZero() || previous == f.published()) {
		t.Fatalf("the previous credential %s: valid %v, retiring at %v, published %s; want it valid and retiring until the grace has passed", previous, ok, c.RetireAt, f.published())
	}
	skew = 2 * time.Hour // every grace has passed
	if !s.deleted {
		steady(t, f)
	}
	checkRestart(t, f, s, before, true)
	if s.check != nil {
		s.check(t, f)
	}
	return m
}

// steady reconciles with fresh controllers until a pass succeeds, calls the issuer for nothing
// but ending retirees, and leaves the etcd-backup secret, the entry's annotations and the
// issuer's credentials as they were (gardener's write of the secret and the record's write
// after it are made on every pass).
func steady(t *testing.T, f *entryCredFixture) {
	t.Helper()
	var last []string
	for pass := 0; pass < 5; pass++ {
		m := &mutations{}
		state := f.state()
		f.issuer.Fault = m.call
		a := &passes{p: f.registered(), client: m.writer(f.client)}
		a.creds = entrycredentials.New(a.p, f.client, a.client, f.recorder)
		err := a.Reconcile(context.Background(), logr.Discard(), f.current())
		f.issuer.Fault = nil
		f.events()
		last = append(m.calls, fmt.Sprint(err))
		if err == nil && state == f.state() && !slices.ContainsFunc(m.calls, func(c string) bool {
			return slices.Contains([]string{credtest.OpIssue, credtest.OpRevoke, credtest.OpRetire}, c)
		}) {
			return
		}
	}
	t.Fatalf("not steady after five passes; the last: %v", last)
}

// state is what a steady pass leaves as it was.
func (f *entryCredFixture) state() string {
	s := f.etcdBackup()
	return fmt.Sprint(s.Data, s.Annotations, f.current().Annotations, f.issuer.Held())
}

// checkRestart checks the invariants; ended: the graces have passed.
func checkRestart(t *testing.T, f *entryCredFixture, s restartScenario, before map[string]credtest.Cred, ended bool) {
	t.Helper()
	held := f.issuer.Held()
	for id, c := range before {
		if got, ok := held[id]; !ok || got != c {
			t.Fatalf("another entry's credential %s (%+v) was touched: %+v, valid %v", id, c, got, ok)
		}
	}
	ofEntry := map[string]credtest.Cred{}
	for id, c := range held {
		if _, other := before[id]; !other {
			ofEntry[id] = c
		}
	}
	if s.deleted {
		if len(ofEntry) != 0 {
			t.Fatalf("the deleted entry's credentials %v are still valid", ofEntry)
		}
		return
	}
	published := f.published()
	if s.own {
		c, ok := held[published]
		if !ok || c.Prefix != testEntry+"/" || c.Access != objectstore.EntryReadWrite || c.Bucket != testBucket || !c.RetireAt.IsZero() {
			t.Fatalf("etcd-backup holds %q (%+v, valid %v); want a valid read-write credential of the entry's prefix", published, c, ok)
		}
	} else if published != "value" {
		t.Fatalf("etcd-backup holds %q; want the bucket's", published)
	}
	if ended {
		want := 0
		if s.own {
			want = 1
		}
		if len(ofEntry) != want {
			t.Fatalf("once the graces have passed the issuer holds %v of the entry; want %d (the published %q)", ofEntry, want, published)
		}
		return
	}
	r := f.record()
	var named []entryrecord.Credential
	named = append(named, r.Unrevoked...)
	if r.Retiring != nil {
		named = append(named, r.Retiring.Credential)
	}
	if in := entryrecord.ReadKept(f.current().Annotations).Intent; in != nil {
		named = append(named, in.Credentials()...)
	}
	for id, c := range ofEntry {
		if id == published && s.own {
			continue
		}
		if !c.RetireAt.IsZero() || slices.ContainsFunc(named, func(n entryrecord.Credential) bool { return n.ID == id || n.ID == "" }) {
			continue
		}
		t.Fatalf("the entry's credential %s (%+v) is neither published, retiring, nor named by the record %+v or the intent: nothing ends it", id, c, r)
	}
}
