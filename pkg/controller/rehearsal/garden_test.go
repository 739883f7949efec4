// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
)

const (
	seedName = "seed-a"
	// ourInstallation is the rehearsal's ControllerInstallation, installed by gardenlet into the
	// seed's namespace extension-<its name>.
	ourInstallation = "backup-mem-rehearsal-x1y2z"
)

// gardenletConditions are what gardenlet keeps on a healthy ControllerInstallation.
func gardenletConditions() []gardencorev1beta1.Condition {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var out []gardencorev1beta1.Condition
	for _, c := range []struct {
		t gardencorev1beta1.ConditionType
		s gardencorev1beta1.ConditionStatus
	}{
		{gardencorev1beta1.ControllerInstallationValid, gardencorev1beta1.ConditionTrue},
		{gardencorev1beta1.ControllerInstallationInstalled, gardencorev1beta1.ConditionTrue},
		{gardencorev1beta1.ControllerInstallationHealthy, gardencorev1beta1.ConditionTrue},
		{gardencorev1beta1.ControllerInstallationProgressing, gardencorev1beta1.ConditionFalse},
	} {
		out = append(out, gardencorev1beta1.Condition{Type: c.t, Status: c.s, Reason: "Gardenlet", Message: "gardenlet's", LastTransitionTime: at, LastUpdateTime: at})
	}
	return out
}

func installation(name, seed, registration string) *gardencorev1beta1.ControllerInstallation {
	return &gardencorev1beta1.ControllerInstallation{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gardencorev1beta1.ControllerInstallationSpec{
			RegistrationRef: corev1.ObjectReference{Name: registration},
			SeedRef:         &corev1.ObjectReference{Name: seed},
		},
		Status: gardencorev1beta1.ControllerInstallationStatus{Conditions: gardenletConditions()}}
}

// identifiedAs answers a SelfSubjectReview as the garden does for a kubeconfig of user username;
// every other create goes to the fake.
func identifiedAs(username string) func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
	return func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		review, ok := obj.(*authenticationv1.SelfSubjectReview)
		if !ok {
			return c.Create(ctx, obj, opts...)
		}
		review.Status.UserInfo = authenticationv1.UserInfo{Username: username,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:seed-" + seedName, "system:authenticated"}}
		return nil
	}
}

// gardenWith is a fake garden with the rehearsal's ControllerInstallation of seedName, the
// incumbent's of the same seed, and objs. Unless funcs has a Create, the garden kubeconfig is
// the rehearsal's ServiceAccount (its SelfSubjectReview says so).
func gardenWith(funcs interceptor.Funcs, objs ...client.Object) client.Client {
	s := runtime.NewScheme()
	_ = gardencorev1beta1.AddToScheme(s)
	_ = authenticationv1.AddToScheme(s)
	if funcs.Create == nil {
		funcs.Create = identifiedAs(rehearsal.ServiceAccountUsername(seedName, ourInstallation))
	}
	objs = append(objs, installation("provider-mem-abcde", seedName, "provider-mem"))
	return fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&gardencorev1beta1.ControllerInstallation{}).
		WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func readInstallation(t *testing.T, c client.Client, name string) *gardencorev1beta1.ControllerInstallation {
	t.Helper()
	ci := &gardencorev1beta1.ControllerInstallation{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, ci); err != nil {
		t.Fatal(err)
	}
	return ci
}

// kubeconfigFile writes a kubeconfig of a server that is never called.
func kubeconfigFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path, token := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t0ken"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := `apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://garden.invalid:6443"}
  name: garden
contexts:
- context: {cluster: garden, user: extension}
  name: garden
current-context: garden
users:
- name: extension
  user: {tokenFile: ` + token + `}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNewGarden: the rehearsal writes to the garden only with a kubeconfig, a seed name and a
// namespace extension-<name>, and then to ControllerInstallation <name> of that seed; without
// one of them it says why; a kubeconfig that does not load fails every write with its error.
func TestNewGarden(t *testing.T) {
	kubeconfig := kubeconfigFile(t)
	for _, tc := range []struct {
		name, kubeconfig, seed, namespace string
		why                               string
	}{
		{"not injected", "", seedName, "extension-" + ourInstallation, "injectGardenKubeconfig"},
		{"no seed name", kubeconfig, "", "extension-" + ourInstallation, "SEED_NAME"},
		{"not installed by gardenlet", kubeconfig, seedName, "garden", `namespace "garden" is not a ControllerInstallation's`},
		{"no name after the prefix", kubeconfig, seedName, "extension-", `namespace "extension-" is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, why := rehearsal.NewGarden(tc.kubeconfig, tc.seed, tc.namespace)
			if g != nil || !strings.Contains(why, tc.why) {
				t.Fatalf("NewGarden: %+v, %q; want none, because of %q", g, why, tc.why)
			}
		})
	}
	g, why := rehearsal.NewGarden(kubeconfig, seedName, "extension-"+ourInstallation)
	if g == nil || why != "" || g.Client == nil || g.Seed != seedName || g.ControllerInstallation != ourInstallation {
		t.Fatalf("NewGarden: %+v, %q; want ControllerInstallation %s of seed %s", g, why, ourInstallation, seedName)
	}
	g, why = rehearsal.NewGarden(filepath.Join(t.TempDir(), "absent"), seedName, "extension-"+ourInstallation)
	if g == nil || why != "" {
		t.Fatalf("NewGarden with a kubeconfig that does not load: %+v, %q; want a Garden that fails", g, why)
	}
	if err := g.SetCondition(context.Background(), gardencorev1beta1.ConditionTrue, "r", "m", time.Now()); err == nil || !strings.Contains(err.Error(), "loading the garden kubeconfig") {
		t.Fatalf("SetCondition: %v; want the kubeconfig's error", err)
	}
}

// TestGardenSetCondition: the condition Rehearsal is patched onto the rehearsal's own
// ControllerInstallation alone, in a patch that holds that condition only, so that gardenlet's
// stay as they were; its LastTransitionTime moves only when the status changes.
func TestGardenSetCondition(t *testing.T) {
	ctx := context.Background()
	var patches []string
	c := gardenWith(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		patches = append(patches, obj.GetName()+"/"+sub+" "+string(patch.Type())+" "+string(data))
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}, installation(ourInstallation, seedName, "backup-mem-rehearsal"))
	g := &rehearsal.Garden{Client: c, Seed: seedName, ControllerInstallation: ourInstallation}
	incumbentBefore := readInstallation(t, c, "provider-mem-abcde")

	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		status         gardencorev1beta1.ConditionStatus
		reason, msg    string
		at, transition time.Time
	}{
		{gardencorev1beta1.ConditionFalse, rehearsal.ReasonNotAdoptable, "1 cannot be taken over.", t0, t0},
		{gardencorev1beta1.ConditionFalse, rehearsal.ReasonNotAdoptable, "2 cannot be taken over.", t0.Add(time.Hour), t0},
		{gardencorev1beta1.ConditionTrue, rehearsal.ReasonAllAdoptable, "all can.", t0.Add(2 * time.Hour), t0.Add(2 * time.Hour)},
	}
	for i, s := range steps {
		if err := g.SetCondition(ctx, s.status, s.reason, s.msg, s.at); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		ci := readInstallation(t, c, ourInstallation)
		cond := v1beta1helper.GetCondition(ci.Status.Conditions, rehearsal.ConditionRehearsal)
		if cond == nil || cond.Status != s.status || cond.Reason != s.reason || cond.Message != s.msg ||
			!cond.LastUpdateTime.Time.Equal(s.at) || !cond.LastTransitionTime.Time.Equal(s.transition) {
			t.Fatalf("step %d: condition %+v; want %s %s %q updated at %s, transitioned at %s", i, cond, s.status, s.reason, s.msg, s.at, s.transition)
		}
		if others := v1beta1helper.RemoveConditions(ci.Status.Conditions, rehearsal.ConditionRehearsal); !apiequality.Semantic.DeepEqual(others, gardenletConditions()) {
			t.Fatalf("step %d: gardenlet's conditions became %+v", i, others)
		}
	}
	if len(patches) != len(steps) {
		t.Fatalf("patches %v; want one per step", patches)
	}
	for _, p := range patches {
		name, rest, _ := strings.Cut(p, " ")
		typ, data, _ := strings.Cut(rest, " ")
		var body struct {
			Status struct {
				Conditions []gardencorev1beta1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal([]byte(data), &body); err != nil {
			t.Fatal(err)
		}
		if name != ourInstallation+"/status" || typ != "application/strategic-merge-patch+json" || len(body.Status.Conditions) != 1 || body.Status.Conditions[0].Type != rehearsal.ConditionRehearsal {
			t.Fatalf("patch %s; want a strategic merge of %s/status with the condition %s only", p, ourInstallation, rehearsal.ConditionRehearsal)
		}
	}
	if after := readInstallation(t, c, "provider-mem-abcde"); !apiequality.Semantic.DeepEqual(incumbentBefore, after) {
		t.Fatal("the incumbent's ControllerInstallation changed")
	}
}

// TestGardenSetConditionFails: each way the garden's write fails is an error that names the
// ControllerInstallation and keeps its cause; a ControllerInstallation of another seed is never
// written.
func TestGardenSetConditionFails(t *testing.T) {
	ctx := context.Background()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "core.gardener.cloud", Resource: "controllerinstallations"}, ourInstallation, errors.New("no relationship found"))
	for _, tc := range []struct {
		name  string
		funcs interceptor.Funcs
		objs  []client.Object
		is    func(error) bool
		says  string
	}{
		{"gone", interceptor.Funcs{}, nil, apierrors.IsNotFound, "reading ControllerInstallation " + ourInstallation},
		{"not readable", interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		}},
			[]client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")}, apierrors.IsForbidden, "reading ControllerInstallation " + ourInstallation},
		{"no answer", interceptor.Funcs{Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			<-ctx.Done() // a garden that does not answer: only the timeout ends the request
			return ctx.Err()
		}}, []client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")},
			func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }, "reading ControllerInstallation " + ourInstallation},
		{"of another seed", interceptor.Funcs{}, []client.Object{installation(ourInstallation, "seed-b", "backup-mem-rehearsal")},
			func(err error) bool { return errors.Is(err, rehearsal.ErrNotOurs) }, "is not of seed " + seedName},
		{"who am I not answered", interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "", errors.New("RBAC: access denied"))
		}}, []client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")}, apierrors.IsForbidden, "asking the garden who the garden kubeconfig is"},
		{"the kubeconfig is another installation's", interceptor.Funcs{Create: identifiedAs(rehearsal.ServiceAccountUsername(seedName, "provider-mem-abcde"))},
			[]client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")},
			func(err error) bool { return errors.Is(err, rehearsal.ErrNotOurs) },
			`the garden kubeconfig is "system:serviceaccount:seed-seed-a:extension-provider-mem-abcde", not "system:serviceaccount:seed-seed-a:extension-` + ourInstallation + `"`},
		{"the kubeconfig is another seed's", interceptor.Funcs{Create: identifiedAs(rehearsal.ServiceAccountUsername("seed-b", ourInstallation))},
			[]client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")},
			func(err error) bool { return errors.Is(err, rehearsal.ErrNotOurs) }, "refusing to write onto it"},
		{"the kubeconfig is not a ServiceAccount", interceptor.Funcs{Create: identifiedAs("admin")},
			[]client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")},
			func(err error) bool { return errors.Is(err, rehearsal.ErrNotOurs) }, `the garden kubeconfig is "admin"`},
		{"not patchable", interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return forbidden
		}}, []client.Object{installation(ourInstallation, seedName, "backup-mem-rehearsal")}, apierrors.IsForbidden, "patching the condition Rehearsal of ControllerInstallation " + ourInstallation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gardenWith(tc.funcs, tc.objs...)
			g := &rehearsal.Garden{Client: c, Seed: seedName, ControllerInstallation: ourInstallation, Timeout: 50 * time.Millisecond}
			err := g.SetCondition(ctx, gardencorev1beta1.ConditionTrue, rehearsal.ReasonAllAdoptable, "all can.", time.Now())
			if err == nil || !tc.is(err) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("SetCondition: %v; want an error that says %q and keeps its cause", err, tc.says)
			}
			read, cancel := context.WithTimeout(ctx, time.Second) // "no answer" reads nothing
			defer cancel()
			for _, o := range tc.objs {
				ci := &gardencorev1beta1.ControllerInstallation{}
				if c.Get(read, client.ObjectKeyFromObject(o), ci) == nil && v1beta1helper.GetCondition(ci.Status.Conditions, rehearsal.ConditionRehearsal) != nil {
					t.Fatalf("ControllerInstallation %s got the condition", o.GetName())
				}
			}
		})
	}
}

// seedCondition is the condition Rehearsal on the fake seed's Extension.
func seedCondition(t *testing.T, c client.Client) *gardencorev1beta1.Condition {
	t.Helper()
	ex := &extensionsv1alpha1.Extension{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "garden", Name: "backup-mem"}, ex); err != nil {
		t.Fatal(err)
	}
	return v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal)
}

// TestOnceCopiesTheConditionToTheGarden: a rehearsal with garden access sets the same condition
// on its ControllerInstallation as on the seed's Extension, also when nothing could be listed.
func TestOnceCopiesTheConditionToTheGarden(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		funcs interceptor.Funcs
	}{
		{"rehearsed", interceptor.Funcs{}},
		{"nothing listed", interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("the API server is away")
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seed(t, tc.funcs)
			garden := gardenWith(interceptor.Funcs{}, installation(ourInstallation, seedName, "backup-mem-rehearsal"))
			r := rehearser(c, planning{Store: controllertest.Bucket(t, bucketName), changes: someChanges})
			r.Garden = &rehearsal.Garden{Client: garden, Seed: seedName, ControllerInstallation: ourInstallation}
			_ = r.Once(ctx)
			onSeed := seedCondition(t, c)
			inGarden := v1beta1helper.GetCondition(readInstallation(t, garden, ourInstallation).Status.Conditions, rehearsal.ConditionRehearsal)
			if onSeed == nil || inGarden == nil || onSeed.Status != inGarden.Status || onSeed.Reason != inGarden.Reason || onSeed.Message != inGarden.Message {
				t.Fatalf("on the seed %+v, in the garden %+v; want the same", onSeed, inGarden)
			}
		})
	}
}

// TestOnceWhenTheGardenFails: the seed's report is written as without a garden, and the seed's
// condition says that the garden's copy failed and why.
func TestOnceWhenTheGardenFails(t *testing.T) {
	ctx := context.Background()
	c := seed(t, interceptor.Funcs{})
	garden := gardenWith(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "core.gardener.cloud", Resource: "controllerinstallations"}, ourInstallation, errors.New("no relationship found"))
	}}, installation(ourInstallation, seedName, "backup-mem-rehearsal"))
	r := rehearser(c, planning{Store: controllertest.Bucket(t, bucketName), changes: someChanges})
	r.Garden = &rehearsal.Garden{Client: garden, Seed: seedName, ControllerInstallation: ourInstallation}
	if err := r.Once(ctx); err != nil {
		t.Fatalf("Once: %v; the garden's failure must not fail the seed's report", err)
	}
	cond := seedCondition(t, c)
	want := "This condition could not be copied to ControllerInstallation " + ourInstallation + " in the garden: patching the condition Rehearsal"
	if cond == nil || cond.Reason != rehearsal.ReasonCannotTell || !strings.HasPrefix(cond.Message, want) ||
		!strings.Contains(cond.Message, "no relationship found") || !strings.Contains(cond.Message, "1 of 1 BackupBuckets") {
		t.Fatalf("the seed's condition %+v; want the summary, after %q and the cause", cond, want)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name}, cm); err != nil {
		t.Fatalf("the report's ConfigMap: %v", err)
	}
}
