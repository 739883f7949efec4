// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package rehearsalgarden_test shows the rehearsal's report from the garden: gardener v1.150.0's
// real gardener-apiserver (gardener's test/envtest) is the garden, a second API server the seed,
// and the real aws binary rehearses with --rehearse and a garden kubeconfig shaped as gardenlet's
// generic one (a tokenFile with a token of ServiceAccount seed-<seed>/extension-<installation>).
// gardenlet's real ControllerInstallation care reconciler and gardener-controller-manager's real
// seed extensionscheck reconciler then run against that garden.
//
// Not run here: gardener's SeedAuthorizer (a webhook of gardener-admission-controller). Its grant
// to an extension's ServiceAccount on ControllerInstallations of its seed (get, list, watch,
// update, patch, the status subresource) is played by a ClusterRole with those verbs.
package rehearsalgarden_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	controllermanagerconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/controllermanager/v1alpha1"
	gardenletconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/gardenlet/v1alpha1"
	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	resourcesv1alpha1 "github.com/gardener/gardener/pkg/apis/resources/v1alpha1"
	"github.com/gardener/gardener/pkg/client/kubernetes"
	"github.com/gardener/gardener/pkg/controllermanager/controller/seed/extensionscheck"
	"github.com/gardener/gardener/pkg/gardenlet/controller/controllerinstallation/care"
	gardenerenvtest "github.com/gardener/gardener/test/envtest"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const (
	seedName = "seed-a"
	// installation is the rehearsal's ControllerInstallation (gardener-controller-manager names it
	// <registration>-<random>); gardenlet installs it into the seed's namespace extension-<name>.
	installation = "backup-aws-rehearsal-x7k2p"
	// incumbent is the incumbent provider extension's ControllerInstallation on the same seed.
	incumbent = "provider-aws-q4m8n"
)

// TestRehearsalConditionInTheGarden: the rehearsal sets the condition Rehearsal (False: a bucket
// it cannot take over) on its own ControllerInstallation in the garden, the same as on the
// seed's Extension, and on no other; gardenlet's care reconciler then writes Installed, Healthy
// and Progressing and keeps it, also from a copy read before the rehearsal wrote (a stale cache);
// and the seed's ExtensionsReady is True with the Rehearsal False.
func TestRehearsalConditionInTheGarden(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	binary, err := stack.BuildBinary(dir, "aws")
	if err != nil {
		t.Fatal(err)
	}
	garden, gardenCfg := startGarden(t)
	seedEnv, seedClient := startSeed(t)

	// The garden as gardener-controller-manager and gardenlet leave it: the Seed, the rehearsal's
	// registration as the examples have it, its ControllerInstallation and the incumbent's, with
	// Valid as gardenlet's installation reconciler sets it.
	seed := newSeed()
	deployment, registration := exampleRegistration(t)
	for _, o := range []client.Object{seed, deployment, registration} {
		if err := garden.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s in the garden: %v", o, o.GetName(), err)
		}
	}
	ours, theirs := newInstallation(installation, registration.Name), newInstallation(incumbent, "provider-aws")
	for _, ci := range []*gardencorev1beta1.ControllerInstallation{ours, theirs} {
		if err := garden.Create(ctx, ci); err != nil {
			t.Fatal(err)
		}
		setValid(t, garden, ci)
	}
	kubeconfig := extensionKubeconfig(t, garden, gardenCfg, dir)
	refusesAnotherIdentity(t, garden, gardenCfg, dir)

	// The seed: the namespace gardenlet installs the rehearsal into, the seed's Extension, and a
	// BackupBucket whose providerConfig this extension refuses.
	bad := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "rehearsal-garden-bucket"},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws",
			ProviderConfig: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","unknownField":true}`)}},
			Region: "eu-central-1", SecretRef: corev1.SecretReference{Namespace: "garden", Name: "backup-operator"}}}
	class := extensionsv1alpha1.ExtensionClassSeed
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "extension-" + installation}},
		&extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-aws"},
			Spec: extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "backup-aws", Class: &class}}},
		bad,
	} {
		if err := seedClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	staleCopy := readInstallation(t, garden, installation) // what a cache read before the rehearsal holds

	rehearsing, err := stack.StartExtension(ctx, seedEnv, binary, dir, "--rehearse", "--rehearsal-interval=1h",
		"--leader-election-namespace", "extension-"+installation, "--garden-kubeconfig", kubeconfig, "--seed-name", seedName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rehearsing.Stop)
	inGarden := waitForGardenCondition(t, garden, rehearsing.LogPath)
	onSeed := waitForSeedCondition(t, seedClient, inGarden) // written after the garden's copy
	if inGarden.Status != gardencorev1beta1.ConditionFalse || inGarden.Reason != rehearsal.ReasonNotAdoptable {
		t.Fatalf("the garden's condition %s %s: %s; want False %s (bucket %s is refused)", inGarden.Status, inGarden.Reason, inGarden.Message, rehearsal.ReasonNotAdoptable, bad.Name)
	}
	if onSeed == nil || onSeed.Status != inGarden.Status || onSeed.Reason != inGarden.Reason || onSeed.Message != inGarden.Message {
		t.Fatalf("on the seed %+v; in the garden %+v; want the same", onSeed, inGarden)
	}
	if c := v1beta1helper.GetCondition(readInstallation(t, garden, incumbent).Status.Conditions, rehearsal.ConditionRehearsal); c != nil {
		t.Fatalf("the incumbent's ControllerInstallation got the condition: %+v", c)
	}
	if c := v1beta1helper.GetCondition(readInstallation(t, garden, installation).Status.Conditions, gardencorev1beta1.ControllerInstallationValid); c == nil || c.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("gardenlet's Valid became %+v", c)
	}
	t.Logf("ControllerInstallation %s: %s %s %s: %s", installation, inGarden.Type, inGarden.Status, inGarden.Reason, inGarden.Message)
	rehearsing.Stop()

	// gardener-controller-manager's extensionscheck before gardenlet's care: our installation has
	// no Healthy yet, so the Seed's extensions are not ready (the reconciler reads it).
	checkExtensions(t, garden, seed)
	if c := seedExtensionsReady(t, garden); c == nil || c.Status == gardencorev1beta1.ConditionTrue {
		t.Fatalf("ExtensionsReady %+v before gardenlet's care wrote Healthy; want not True", c)
	}

	// gardenlet's care reconciler, from its cache's stale copy of the installation, with the
	// rehearsal's ManagedResource applied and healthy in the seed.
	managedResource(t, seedClient, installation)
	stale := interceptor.NewClient(garden, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if ci, ok := obj.(*gardencorev1beta1.ControllerInstallation); ok && key.Name == installation {
			staleCopy.DeepCopyInto(ci)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	careReconciler := &care.Reconciler{GardenClient: stale, SeedClient: seedClient, Clock: clock.RealClock{}, ManagedResourceNamespace: "garden",
		Config: gardenletconfigv1alpha1.ControllerInstallationCareControllerConfiguration{SyncPeriod: &metav1.Duration{Duration: time.Minute}}}
	if _, err := careReconciler.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: installation}}); err != nil {
		t.Fatalf("gardenlet's care reconciler: %v", err)
	}
	ci := readInstallation(t, garden, installation)
	for _, want := range []struct {
		t gardencorev1beta1.ConditionType
		s gardencorev1beta1.ConditionStatus
	}{
		{gardencorev1beta1.ControllerInstallationInstalled, gardencorev1beta1.ConditionTrue},
		{gardencorev1beta1.ControllerInstallationHealthy, gardencorev1beta1.ConditionTrue},
		{gardencorev1beta1.ControllerInstallationProgressing, gardencorev1beta1.ConditionFalse},
	} {
		if c := v1beta1helper.GetCondition(ci.Status.Conditions, want.t); c == nil || c.Status != want.s {
			t.Fatalf("gardenlet's care wrote %s %+v; want %s", want.t, c, want.s)
		}
	}
	if c := v1beta1helper.GetCondition(ci.Status.Conditions, rehearsal.ConditionRehearsal); c == nil || c.Status != inGarden.Status || c.Message != inGarden.Message {
		t.Fatalf("after gardenlet's care the condition Rehearsal is %+v; want it kept: %+v", c, inGarden)
	}

	// gardener-controller-manager's extensionscheck: every installation valid, installed,
	// healthy, not progressing: ExtensionsReady True, the Rehearsal False notwithstanding.
	setCared(t, garden, incumbent)
	checkExtensions(t, garden, seed)
	if c := seedExtensionsReady(t, garden); c == nil || c.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("ExtensionsReady %+v with the Rehearsal False; want True", c)
	}
}

// exampleRegistration is example/aws/rehearsal-registration.yaml: its ControllerDeployment and
// ControllerRegistration.
func exampleRegistration(t *testing.T) (*gardencorev1.ControllerDeployment, *gardencorev1beta1.ControllerRegistration) {
	t.Helper()
	data, err := os.ReadFile("../../../example/aws/rehearsal-registration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	deployment, registration := &gardencorev1.ControllerDeployment{}, &gardencorev1beta1.ControllerRegistration{}
	if len(docs) != 2 || sigsyaml.Unmarshal([]byte(docs[0]), deployment) != nil || sigsyaml.Unmarshal([]byte(docs[1]), registration) != nil {
		t.Fatal("example/aws/rehearsal-registration.yaml is not a ControllerDeployment and a ControllerRegistration")
	}
	return deployment, registration
}

// startGarden starts gardener-apiserver with its kube-apiserver; the client is an admin's.
func startGarden(t *testing.T) (client.WithWatch, *rest.Config) {
	t.Helper()
	assets, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		t.Fatal(err)
	}
	env := &gardenerenvtest.GardenerTestEnvironment{
		Environment: &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: 3 * time.Minute, ControlPlaneStopTimeout: time.Minute},
		GardenerAPIServer: &gardenerenvtest.GardenerAPIServer{
			// As gardener's own extensionscheck suite.
			Args:         []string{"--disable-admission-plugins=DeletionConfirmation,ResourceReferenceManager,SeedValidator,ExtensionValidator,ExtensionLabels", "--log-level=error"},
			StartTimeout: 3 * time.Minute, StopTimeout: time.Minute,
			Out: io.Discard, Err: io.Discard,
		},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the garden (gardener-apiserver): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: kubernetes.GardenScheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// startSeed starts the seed's API server with gardener's extension CRDs and the ManagedResource.
func startSeed(t *testing.T) (*envtest.Environment, client.Client) {
	t.Helper()
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	crd, err := gardenerFile("example/seed-crds/10-crd-resources.gardener.cloud_managedresources.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := resourcesv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

// gardenerFile is the path of a file of the gardener module.
func gardenerFile(rel string) (string, error) {
	crds, err := stack.GardenerCRDs()
	if err != nil {
		return "", err
	}
	// GardenerCRDs' first path is <module>/pkg/component/extensions/crds/assets/<file>.
	module := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(crds[0]))))))
	return filepath.Join(module, rel), nil
}

// newSeed is a Seed as gardener's extensionscheck suite creates one.
func newSeed() *gardencorev1beta1.Seed {
	ref := corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "dns", Namespace: "garden"}
	nodes, pods, services := "10.2.0.0/16", "100.128.0.0/11", "100.72.0.0/13"
	return &gardencorev1beta1.Seed{ObjectMeta: metav1.ObjectMeta{Name: seedName},
		Spec: gardencorev1beta1.SeedSpec{
			Provider: gardencorev1beta1.SeedProvider{Region: "eu-central-1", Type: "aws"},
			Ingress:  &gardencorev1beta1.Ingress{Domain: "ingress.example.com", Controller: gardencorev1beta1.IngressController{Kind: "nginx"}},
			DNS: gardencorev1beta1.SeedDNS{
				Provider: &gardencorev1beta1.SeedDNSProvider{Type: "aws-route53", CredentialsRef: &ref},
				Internal: &gardencorev1beta1.SeedDNSProviderConfig{Type: "aws-route53", Domain: "internal.example.com", CredentialsRef: ref},
			},
			Settings: &gardencorev1beta1.SeedSettings{Scheduling: &gardencorev1beta1.SeedSettingScheduling{Visible: true}},
			Networks: gardencorev1beta1.SeedNetworks{Pods: "10.0.0.0/16", Services: "10.1.0.0/16", Nodes: &nodes,
				ShootDefaults: &gardencorev1beta1.ShootNetworks{Pods: &pods, Services: &services}},
		}}
}

func newInstallation(name, registration string) *gardencorev1beta1.ControllerInstallation {
	return &gardencorev1beta1.ControllerInstallation{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gardencorev1beta1.ControllerInstallationSpec{
			SeedRef:         &corev1.ObjectReference{Name: seedName},
			RegistrationRef: corev1.ObjectReference{Name: registration},
			DeploymentRef:   &corev1.ObjectReference{Name: registration},
		}}
}

// mergeConditions writes conditions onto ci as gardenlet does (MergeConditions, a strategic
// merge patch of status from the copy read).
func mergeConditions(t *testing.T, garden client.Client, ci *gardencorev1beta1.ControllerInstallation, conditions ...gardencorev1beta1.Condition) {
	t.Helper()
	patch := client.StrategicMergeFrom(ci.DeepCopy())
	ci.Status.Conditions = v1beta1helper.MergeConditions(ci.Status.Conditions, conditions...)
	if err := garden.Status().Patch(context.Background(), ci, patch); err != nil {
		t.Fatal(err)
	}
}

// setValid is gardenlet's installation reconciler's Valid after it rendered the chart.
func setValid(t *testing.T, garden client.Client, ci *gardencorev1beta1.ControllerInstallation) {
	t.Helper()
	c := v1beta1helper.UpdatedConditionWithClock(clock.RealClock{}, v1beta1helper.InitConditionWithClock(clock.RealClock{}, gardencorev1beta1.ControllerInstallationValid),
		gardencorev1beta1.ConditionTrue, "RegistrationValid", "chart could be rendered successfully.")
	mergeConditions(t, garden, ci, c)
}

// setCared is what gardenlet's care writes for a healthy installation (the incumbent's, whose
// ManagedResource is not played here).
func setCared(t *testing.T, garden client.Client, name string) {
	t.Helper()
	ci := readInstallation(t, garden, name)
	var conditions []gardencorev1beta1.Condition
	for typ, status := range map[gardencorev1beta1.ConditionType]gardencorev1beta1.ConditionStatus{
		gardencorev1beta1.ControllerInstallationInstalled:   gardencorev1beta1.ConditionTrue,
		gardencorev1beta1.ControllerInstallationHealthy:     gardencorev1beta1.ConditionTrue,
		gardencorev1beta1.ControllerInstallationProgressing: gardencorev1beta1.ConditionFalse,
	} {
		conditions = append(conditions, v1beta1helper.UpdatedConditionWithClock(clock.RealClock{}, v1beta1helper.InitConditionWithClock(clock.RealClock{}, typ), status, "Played", "as gardenlet's care writes it"))
	}
	mergeConditions(t, garden, ci, conditions...)
}

func readInstallation(t *testing.T, garden client.Client, name string) *gardencorev1beta1.ControllerInstallation {
	t.Helper()
	ci := &gardencorev1beta1.ControllerInstallation{}
	if err := garden.Get(context.Background(), client.ObjectKey{Name: name}, ci); err != nil {
		t.Fatal(err)
	}
	return ci
}

// extensionKubeconfig is a kubeconfig as gardenlet's generic garden kubeconfig: the garden's
// server and a tokenFile holding a token of ServiceAccount seed-<seed>/extension-<installation>,
// which the ClusterRole that plays the SeedAuthorizer's grant is bound to.
func extensionKubeconfig(t *testing.T, garden client.Client, cfg *rest.Config, dir string) string {
	t.Helper()
	ctx := context.Background()
	ns, sa := "seed-"+seedName, "extension-"+installation
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "seed-authorizer-extension"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"controllerinstallations", "controllerinstallations/status"},
		Verbs: []string{"get", "list", "watch", "update", "patch"},
	}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "seed-authorizer-extension"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		// The SeedAuthorizer grants every extension of the seed the same: the incumbent's too.
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}, {Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "extension-" + incumbent}}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, role, binding} {
		if err := garden.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return serviceAccountKubeconfig(t, garden, cfg, filepath.Join(dir, "rehearsal"), ns, sa)
}

// serviceAccountKubeconfig creates ServiceAccount ns/sa (ns exists) and writes into dir a
// kubeconfig as gardenlet's generic garden kubeconfig with a token of it.
func serviceAccountKubeconfig(t *testing.T, garden client.Client, cfg *rest.Config, dir, ns, sa string) string {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := garden.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); err != nil {
		t.Fatal(err)
	}
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	token, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of %s/%s: %v", ns, sa, err)
	}
	tokenFile, path, ca := filepath.Join(dir, "garden-token"), filepath.Join(dir, "garden-kubeconfig"), filepath.Join(dir, "garden-ca.crt")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- cluster: {server: %q, certificate-authority: %q}
  name: garden
contexts:
- context: {cluster: garden, user: extension}
  name: garden
current-context: garden
users:
- name: extension
  user: {tokenFile: %q}
`, cfg.Host, ca, tokenFile)
	for file, data := range map[string][]byte{tokenFile: []byte(token.Status.Token), ca: cfg.CAData, path: []byte(kubeconfig)} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// refusesAnotherIdentity: with the incumbent's garden ServiceAccount (extension-<incumbent>), a
// rehearsal installed in extension-<installation> refuses to write onto that installation, with
// the identity the garden's SelfSubjectReview gave; the installation is untouched.
func refusesAnotherIdentity(t *testing.T, garden client.Client, cfg *rest.Config, dir string) {
	t.Helper()
	other := serviceAccountKubeconfig(t, garden, cfg, filepath.Join(dir, "incumbent"), "seed-"+seedName, "extension-"+incumbent)
	g, why := rehearsal.NewGarden(other, seedName, "extension-"+installation)
	if g == nil {
		t.Fatalf("NewGarden: %s", why)
	}
	err := g.SetCondition(context.Background(), gardencorev1beta1.ConditionTrue, rehearsal.ReasonAllAdoptable, "all can.", time.Now())
	want := fmt.Sprintf("the garden kubeconfig is %q, not %q", "system:serviceaccount:seed-"+seedName+":extension-"+incumbent, "system:serviceaccount:seed-"+seedName+":extension-"+installation)
	if !errors.Is(err, rehearsal.ErrNotOurs) || !strings.Contains(err.Error(), want) {
		t.Fatalf("SetCondition with the incumbent's kubeconfig: %v; want a refusal that says %s", err, want)
	}
	if c := v1beta1helper.GetCondition(readInstallation(t, garden, installation).Status.Conditions, rehearsal.ConditionRehearsal); c != nil {
		t.Fatalf("ControllerInstallation %s got the condition from another identity: %+v", installation, c)
	}
}

// waitForGardenCondition waits for the condition Rehearsal on the rehearsal's installation, past
// the passes made while the seed's Extension was not applied yet (CannotTell, each object
// "waiting for this seed's configuration"; the next pass follows within seconds).
func waitForGardenCondition(t *testing.T, garden client.Client, log string) *gardencorev1beta1.Condition {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var c *gardencorev1beta1.Condition
	for time.Now().Before(deadline) {
		c = v1beta1helper.GetCondition(readInstallation(t, garden, installation).Status.Conditions, rehearsal.ConditionRehearsal)
		if c != nil && !strings.Contains(c.Message, "waiting for this seed's configuration") {
			return c
		}
		time.Sleep(time.Second)
	}
	b, _ := os.ReadFile(filepath.Clean(log))
	t.Fatalf("no condition %s past the seed configuration's wait on ControllerInstallation %s (last: %+v); the rehearsal's log:\n%s", rehearsal.ConditionRehearsal, installation, c, b)
	return nil
}

// waitForSeedCondition waits for the condition Rehearsal on the seed's Extension to say what
// inGarden says (the rehearsal writes it after the garden's copy) and returns the last one read.
func waitForSeedCondition(t *testing.T, seed client.Client, inGarden *gardencorev1beta1.Condition) *gardencorev1beta1.Condition {
	t.Helper()
	var c *gardencorev1beta1.Condition
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if c = seedCondition(t, seed); c != nil && c.Message == inGarden.Message {
			break
		}
	}
	return c
}

func seedCondition(t *testing.T, seed client.Client) *gardencorev1beta1.Condition {
	t.Helper()
	ex := &extensionsv1alpha1.Extension{}
	if err := seed.Get(context.Background(), client.ObjectKey{Namespace: "garden", Name: "backup-aws"}, ex); err != nil {
		t.Fatal(err)
	}
	return v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal)
}

// managedResource is the rehearsal's ManagedResource in the seed, applied and healthy, as
// gardener-resource-manager reports it.
func managedResource(t *testing.T, seed client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	mr := &resourcesv1alpha1.ManagedResource{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: name},
		Spec: resourcesv1alpha1.ManagedResourceSpec{SecretRefs: []corev1.LocalObjectReference{{Name: "managedresource-" + name}}}}
	if err := seed.Create(ctx, mr); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	mr.Status = resourcesv1alpha1.ManagedResourceStatus{ObservedGeneration: mr.Generation, Conditions: []gardencorev1beta1.Condition{
		{Type: resourcesv1alpha1.ResourcesApplied, Status: gardencorev1beta1.ConditionTrue, LastTransitionTime: now, LastUpdateTime: now},
		{Type: resourcesv1alpha1.ResourcesHealthy, Status: gardencorev1beta1.ConditionTrue, LastTransitionTime: now, LastUpdateTime: now},
		{Type: resourcesv1alpha1.ResourcesProgressing, Status: gardencorev1beta1.ConditionFalse, LastTransitionTime: now, LastUpdateTime: now},
	}}
	if err := seed.Status().Update(ctx, mr); err != nil {
		t.Fatal(err)
	}
}

// checkExtensions runs gardener-controller-manager's extensionscheck reconciler once for seed.
func checkExtensions(t *testing.T, garden client.Client, seed *gardencorev1beta1.Seed) {
	t.Helper()
	r := &extensionscheck.Reconciler{Client: garden, Clock: clock.RealClock{}, Config: controllermanagerconfigv1alpha1.SeedExtensionsCheckControllerConfiguration{
		SyncPeriod: &metav1.Duration{Duration: time.Minute},
	}}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(seed)}); err != nil {
		t.Fatalf("gardener-controller-manager's extensionscheck: %v", err)
	}
}

func seedExtensionsReady(t *testing.T, garden client.Client) *gardencorev1beta1.Condition {
	t.Helper()
	seed := &gardencorev1beta1.Seed{}
	if err := garden.Get(context.Background(), client.ObjectKey{Name: seedName}, seed); err != nil {
		t.Fatal(err)
	}
	return v1beta1helper.GetCondition(seed.Status.Conditions, gardencorev1beta1.SeedExtensionsReady)
}
