// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command incumbent-admission runs, unchanged, the code of the provider extensions that keeps
// running in a landscape after their backup controllers were switched off, on given backup
// configurations, and prints its verdicts:
//
//   - gardener-extension-provider-aws v1.73.0's garden admission validators of Seeds and
//     BackupBuckets (pkg/admission/validator/seed.go, backupbucket.go; registered for every object
//     labelled provider.extensions.gardener.cloud/aws, webhook.go:40-45), with the scheme its
//     admission binary installs (cmd/gardener-extension-admission-aws/app/app.go:127-130);
//   - gardener-extension-provider-gcp v1.53.4's validators of the same kinds (its seed.go,
//     backupbucket.go; scheme as cmd/gardener-extension-admission-gcp/app/app.go:136-139) and its
//     seedprovider webhook's ensurer (pkg/webhook/seedprovider/ensurer.go: EnsureETCD), which
//     mutates every Etcd of a GCP seed from the BackupBucket the Etcd names.
//
// gardener-extension-provider-azure v1.62.1 and -openstack v1.57.0 register no validator of Seeds
// or BackupBuckets and no webhook reading a BackupBucket's providerConfig: there is nothing of
// theirs to run.
//
// It is a module of its own (built by hack/incumbent.sh admission) so that the incumbents'
// dependency versions never enter the main go.mod; both incumbents are built on gardener
// v1.145.0 and controller-runtime v0.23.3, so one module holds both.
//
// Input (stdin): a JSON list of checks; output (stdout): a JSON list of verdicts, in order. A
// check is one admission request or one Etcd mutation:
//
//	{"name": "...", "provider": "aws"|"gcp", "object": "Seed"|"BackupBucket"|"Etcd",
//	 "old": <providerConfig or absent: a create>, "new": <providerConfig or absent>,
//	 "allowedEndpointOverrideURLs": [...],
//	 "extensions": [{"type": ..., "providerConfig": ...}], "oldExtensions": [...]}
//
// A Seed's extensions are its spec.extensions (this extension's seed configuration).
//
// For "Etcd", "new" is the providerConfig of the extensions BackupBucket the Etcd's
// spec.backup.store.container names (absent: a BackupBucket without one).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	awsvalidator "github.com/gardener/gardener-extension-provider-aws/pkg/admission/validator"
	awsinstall "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/install"
	gcpvalidator "github.com/gardener/gardener-extension-provider-gcp/pkg/admission/validator"
	gcpconfig "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/config"
	gcpinstall "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/install"
	"github.com/gardener/gardener-extension-provider-gcp/pkg/webhook/seedprovider"
	extensionswebhook "github.com/gardener/gardener/extensions/pkg/webhook"
	"github.com/gardener/gardener/pkg/apis/core"
	coreinstall "github.com/gardener/gardener/pkg/apis/core/install"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityinstall "github.com/gardener/gardener/pkg/apis/security/install"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Check is one admission request or Etcd mutation.
type Check struct {
	Name     string          `json:"name"`
	Provider string          `json:"provider"`
	Object   string          `json:"object"`
	Old      json.RawMessage `json:"old,omitempty"`
	New      json.RawMessage `json:"new,omitempty"`
	// HasOld makes the request an update even when Old is absent (an object without a
	// providerConfig before).
	HasOld                      bool     `json:"hasOld,omitempty"`
	AllowedEndpointOverrideURLs []string `json:"allowedEndpointOverrideURLs,omitempty"`
	// Extensions, OldExtensions are the Seed's spec.extensions (this extension's seed
	// configuration lives there) in the new and the old Seed.
	Extensions    []Extension `json:"extensions,omitempty"`
	OldExtensions []Extension `json:"oldExtensions,omitempty"`
}

// Extension is an entry of a Seed's spec.extensions.
type Extension struct {
	Type           string          `json:"type"`
	ProviderConfig json.RawMessage `json:"providerConfig,omitempty"`
}

// coreExtensions are exts as the internal API's.
func coreExtensions(exts []Extension) []core.Extension {
	var out []core.Extension
	for _, e := range exts {
		out = append(out, core.Extension{Type: e.Type, ProviderConfig: raw(e.ProviderConfig)})
	}
	return out
}

// Verdict is the incumbent's answer to one Check.
type Verdict struct {
	Name    string `json:"name"`
	Allowed bool   `json:"allowed"`
	Message string `json:"message,omitempty"`
	// EndpointOverride is what the ensurer set in Etcd.spec.backup.store.endpointOverride.
	EndpointOverride *string `json:"endpointOverride,omitempty"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "incumbent-admission:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	var checks []Check
	if err := json.NewDecoder(in).Decode(&checks); err != nil {
		return fmt.Errorf("reading the checks: %w", err)
	}
	verdicts := make([]Verdict, 0, len(checks))
	for _, c := range checks {
		v, err := check(c)
		if err != nil {
			return fmt.Errorf("check %q: %w", c.Name, err)
		}
		verdicts = append(verdicts, v)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(verdicts)
}

func check(c Check) (Verdict, error) {
	if c.Object == "Etcd" {
		if c.Provider != "gcp" {
			return Verdict{}, fmt.Errorf("only provider-gcp mutates Etcds from a BackupBucket, not %q", c.Provider)
		}
		return ensureEtcd(c)
	}
	v, err := validator(c)
	if err != nil {
		return Verdict{}, err
	}
	newObj, oldObj, err := objects(c)
	if err != nil {
		return Verdict{}, err
	}
	verdict := Verdict{Name: c.Name, Allowed: true}
	if err := v.Validate(context.Background(), newObj, oldObj); err != nil {
		verdict.Allowed, verdict.Message = false, err.Error()
	}
	return verdict, nil
}

// schemeOnly is the manager the validators are built with: their constructors read only its
// scheme (NewSeedValidator, NewBackupBucketValidator: serializer.NewCodecFactory(mgr.GetScheme())).
type schemeOnly struct {
	manager.Manager
	scheme *runtime.Scheme
}

func (m schemeOnly) GetScheme() *runtime.Scheme { return m.scheme }

// admissionScheme is the scheme of a provider's admission binary: gardener's core and security
// APIs and the provider's own.
func admissionScheme(provider func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	coreinstall.Install(s)
	securityinstall.Install(s)
	return s, provider(s)
}

func validator(c Check) (extensionswebhook.Validator, error) {
	switch c.Provider {
	case "aws":
		s, err := admissionScheme(awsinstall.AddToScheme)
		if err != nil {
			return nil, err
		}
		mgr := schemeOnly{scheme: s}
		if c.Object == "Seed" {
			return awsvalidator.NewSeedValidator(mgr), nil
		}
		return awsvalidator.NewBackupBucketValidator(mgr), nil
	case "gcp":
		s, err := admissionScheme(gcpinstall.AddToScheme)
		if err != nil {
			return nil, err
		}
		mgr := schemeOnly{scheme: s}
		if c.Object == "Seed" {
			return gcpvalidator.NewSeedValidator(mgr, c.AllowedEndpointOverrideURLs), nil
		}
		return gcpvalidator.NewBackupBucketValidator(mgr, c.AllowedEndpointOverrideURLs), nil
	}
	return nil, fmt.Errorf("no validator of provider %q runs in the garden", c.Provider)
}

// credentialsRef is the backup secret a Seed or BackupBucket names (both validators require a
// Secret or a WorkloadIdentity).
var credentialsRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "garden", Name: "backup-operator"}

func raw(m json.RawMessage) *runtime.RawExtension {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return &runtime.RawExtension{Raw: m}
}

// objects are the internal objects gardener's extension webhook hands the validators (it decodes
// the request into the internal version of the Type's Obj).
func objects(c Check) (newObj, oldObj client.Object, err error) {
	isUpdate := c.HasOld || len(c.Old) > 0
	switch c.Object {
	case "Seed":
		seed := func(pc json.RawMessage, exts []Extension) *core.Seed {
			return &core.Seed{
				ObjectMeta: metav1.ObjectMeta{Name: "seed", Labels: map[string]string{"provider.extensions.gardener.cloud/" + c.Provider: "true"}},
				Spec:       core.SeedSpec{Backup: &core.Backup{Provider: c.Provider, ProviderConfig: raw(pc), CredentialsRef: credentialsRef}, Extensions: coreExtensions(exts)},
			}
		}
		newObj = seed(c.New, c.Extensions)
		if isUpdate {
			oldObj = seed(c.Old, c.OldExtensions)
		}
	case "BackupBucket":
		bucket := func(pc json.RawMessage) *core.BackupBucket {
			return &core.BackupBucket{
				ObjectMeta: metav1.ObjectMeta{Name: "bucket", Labels: map[string]string{"provider.extensions.gardener.cloud/" + c.Provider: "true"}},
				Spec: core.BackupBucketSpec{
					Provider:       core.BackupBucketProvider{Type: c.Provider, Region: "region"},
					ProviderConfig: raw(pc),
					CredentialsRef: credentialsRef,
				},
			}
		}
		newObj = bucket(c.New)
		if isUpdate {
			oldObj = bucket(c.Old)
		}
	default:
		return nil, nil, fmt.Errorf("unknown object %q (Seed, BackupBucket, Etcd)", c.Object)
	}
	if oldObj == nil {
		return newObj, nil, nil // a create: the validators take a nil old object
	}
	return newObj, oldObj, nil
}

// ensureEtcd runs provider-gcp's seedprovider ensurer on an Etcd whose backup store names a
// BackupBucket with the given providerConfig, as its webhook does on every Etcd of a GCP seed.
func ensureEtcd(c Check) (Verdict, error) {
	s := runtime.NewScheme()
	if err := extensionsv1alpha1.AddToScheme(s); err != nil {
		return Verdict{}, err
	}
	const bucketName = "bucket"
	bucket := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucketName},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "gcp", ProviderConfig: raw(c.New)},
			Region:      "region",
			SecretRef:   corev1.SecretReference{Namespace: "garden", Name: "backup-operator"},
		},
	}
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(bucket).Build()
	ensurer := seedprovider.NewEnsurer(&gcpconfig.ETCDStorage{}, reader, logr.Discard())
	container, provider := bucketName, druidcorev1alpha1.StorageProvider("GCS")
	etcd := &druidcorev1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--project--name"},
		Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{
			Container: &container, Prefix: "shoot--project--name--uid/etcd-main", Provider: &provider,
		}}},
	}
	verdict := Verdict{Name: c.Name, Allowed: true}
	if err := ensurer.EnsureETCD(context.Background(), nil, etcd, nil); err != nil {
		verdict.Allowed, verdict.Message = false, err.Error()
		return verdict, nil
	}
	verdict.EndpointOverride = etcd.Spec.Backup.Store.EndpointOverride
	return verdict, nil
}
