// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package controllertest holds what the unit tests of the provider-neutral controllers share: a
// provider over an in-memory store and a fake API server holding the credentials secret.
package controllertest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Store is what Provider serves: both planes of one store and its Writer (usually a
// *memstore.Store).
type Store interface {
	objectstore.DataPlane
	objectstore.Management
	objectstore.Writer
}

// Provider serves type "mem" with Store, whatever the credentials; a secret holding an issued
// credential of a *memstore.Store reaches that store's view for the credential. Its issuer, if
// set, is the one every issuer name builds. The controllers take it through provider.Register.
type Provider struct {
	Store  Store
	Issuer objectstore.CredentialIssuer
	// EntryIssuer, if set, is the entry issuer every name builds (nil: none).
	EntryIssuer objectstore.EntryCredentialIssuer
}

var (
	_ provider.Cloud[*Config]        = Provider{}
	_ provider.EntryIssuing[*Config] = Provider{}
)

// NewEntryIssuer implements provider.EntryIssuing: EntryIssuer, whatever the name.
func (p Provider) NewEntryIssuer(context.Context, provider.Credentials, *Config, string) (objectstore.EntryCredentialIssuer, error) {
	return p.EntryIssuer, nil
}

// Type implements provider.Cloud.
func (Provider) Type() string { return "mem" }

// Config is the "mem" providerConfig: generated credentials only.
type Config struct {
	freshness.Field
	copystore.CopyField

	Generated *credentials.Settings      `json:"generatedCredentials,omitempty"`
	Entry     *credentials.EntrySettings `json:"entryCredentials,omitempty"`
	HandBack  bool                       `json:"handBack,omitempty"`
}

// HandsBack implements config.ProviderConfig.
func (c *Config) HandsBack() bool { return c != nil && c.HandBack }

// GenerationSettings implements credentials.Policy.
func (c *Config) GenerationSettings() *credentials.Settings {
	if c == nil {
		return nil
	}
	return c.Generated
}

// EntryCredentialSettings implements credentials.EntryPolicy.
func (c *Config) EntryCredentialSettings() *credentials.EntrySettings {
	if c == nil {
		return nil
	}
	return c.Entry
}

// Decode implements provider.Cloud: JSON of Config (empty: the defaults, an empty Config).
func (Provider) Decode(raw []byte) (*Config, error) {
	cfg := &Config{}
	if len(raw) == 0 {
		return cfg, nil
	}
	if err := json.Unmarshal(raw, cfg); err != nil {
		return nil, objectstore.Invalidf("providerConfig: %v", err)
	}
	return cfg, nil
}

// RawConfig is cfg as a BackupBucket's providerConfig.
func RawConfig(cfg Config) *runtime.RawExtension {
	raw, _ := json.Marshal(cfg)
	return &runtime.RawExtension{Raw: raw}
}

// ValidateBucketName implements provider.Cloud: every name is valid.
func (Provider) ValidateBucketName(string) error { return nil }

// NewDataPlane implements provider.Cloud.
func (p Provider) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.serve(creds), nil
}

// NewManagement implements provider.Cloud.
func (p Provider) NewManagement(_ context.Context, creds provider.Credentials, _ *Config) (objectstore.Management, error) {
	return p.serve(creds), nil
}

// serve is Store, or the view of an issued credential of a *memstore.Store.
func (p Provider) serve(creds provider.Credentials) Store {
	if mem, ok := p.Store.(*memstore.Store); ok && len(creds.Data[memstore.KeyCredential]) > 0 {
		return mem.ForCredential(creds.Data)
	}
	return p.Store
}

// NewWriter is the Writer of the tests (provider.TestCloud).
func (p Provider) NewWriter(_ context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.serve(creds), nil
}

// NewIssuer implements provider.Cloud: Issuer, whatever the name.
func (p Provider) NewIssuer(context.Context, provider.Credentials, *Config, string) (objectstore.CredentialIssuer, error) {
	return p.Issuer, nil
}

// EtcdBackupSecretData implements provider.Cloud: the data as it is.
func (Provider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return data, nil
}

// Flags implements provider.Cloud: none.
func (Provider) Flags() provider.Flags { return nil }

// SecretRef is the credentials secret that Client holds.
var SecretRef = corev1.SecretReference{Namespace: "garden", Name: "backup-credentials"}

// Client returns a fake API server holding the credentials secret.
func Client() client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: SecretRef.Namespace, Name: SecretRef.Name}, Data: map[string][]byte{"key": []byte("value")}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
}

// Bucket returns an in-memory store (delete batches of 10) with the bucket created and one object
// per key in it: the start of most tests of the controllers. A failure ends the test.
func Bucket(t testing.TB, bucket string, keys ...string) *memstore.Store {
	t.Helper()
	ctx := context.Background()
	mem := memstore.New(10)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if err := mem.PutObject(ctx, bucket, key, []byte("data of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// Queued is the sorted names of the requests fire adds to a fresh queue: what an event handler
// enqueues.
func Queued(fire func(workqueue.TypedRateLimitingInterface[reconcile.Request])) []string {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	fire(q)
	var names []string
	for q.Len() > 0 {
		r, _ := q.Get()
		names = append(names, r.Name)
		q.Done(r)
	}
	slices.Sort(names)
	return names
}
