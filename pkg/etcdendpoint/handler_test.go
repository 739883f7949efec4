// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdendpoint_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/etcdendpoint"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

const (
	shootNS = "shoot--dev--a"
	bucket  = "bucket-1"
	// azureKey is a well-formed account key (base64), no real one.
	azureKey = "a2V5a2V5a2V5a2V5a2V5a2V5"
)

func etcdWith(mutate func(*druidcorev1alpha1.Etcd)) *druidcorev1alpha1.Etcd {
	e := &druidcorev1alpha1.Etcd{
		TypeMeta:   metav1.TypeMeta{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: shootNS},
		Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{
			Container: new(bucket),
			Prefix:    "shoot--dev--a--uid/etcd-main",
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
		}}},
	}
	if mutate != nil {
		mutate(e)
	}
	return e
}

func backupBucket(typ string, class *extensionsv1alpha1.ExtensionClass, config string) *extensionsv1alpha1.BackupBucket {
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucket}}
	bb.Spec.Type = typ
	bb.Spec.Class = class
	if config != "" {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
	return bb
}

func etcdBackup(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: shootNS}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestHandle(t *testing.T) {
	awsP, gcpP, azureP, osP := provider.Register(&aws.Provider{}), provider.Register(&gcp.Provider{}), provider.Register(&azure.Provider{}), provider.Register(&openstack.Provider{})
	seed := extensionsv1alpha1.ExtensionClassSeed
	minio := map[string]string{"accessKeyID": "AKIA", "secretAccessKey": "s3cr3t", "region": "eu-1", "bucketName": bucket, "endpoint": "https://minio.example.com:9000"}
	noEndpoint := map[string]string{"accessKeyID": "AKIA", "secretAccessKey": "s3cr3t", "region": "eu-1", "bucketName": bucket}
	azureAccount := func(domain string) map[string]string {
		return map[string]string{"storageAccount": "acct1", "storageKey": azureKey, "bucketName": bucket, "domain": domain}
	}

	cases := []struct {
		name      string
		p         provider.Provider
		classes   []extensionsv1alpha1.ExtensionClass
		op        admissionv1.Operation
		etcd      *druidcorev1alpha1.Etcd
		objects   []client.Object
		want      string // the endpoint patched in; "" for no patch
		denied    string // a part of the denial's message
		warning   string // a part of a warning
		notInText string // never in the message or a warning
	}{
		{name: "aws endpoint set", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}, want: "https://minio.example.com:9000"},
		{name: "already the same: no patch", p: awsP,
			etcd: etcdWith(func(e *druidcorev1alpha1.Etcd) {
				e.Spec.Backup.Store.EndpointOverride = new("https://minio.example.com:9000")
			}),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}},
		{name: "a different value replaced, said so without values", p: awsP,
			etcd: etcdWith(func(e *druidcorev1alpha1.Etcd) {
				e.Spec.Backup.Store.EndpointOverride = new("https://other.example.com")
			}),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)},
			want:    "https://minio.example.com:9000", warning: "a different value was replaced by the endpoint of BackupBucket bucket-1", notInText: "example.com"},
		{name: "no endpoint in the secret: someone else's value stays", p: awsP,
			etcd: etcdWith(func(e *druidcorev1alpha1.Etcd) {
				e.Spec.Backup.Store.EndpointOverride = new("https://other.example.com")
			}),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(noEndpoint)}},
		{name: "the secret named with its namespace", p: awsP,
			etcd:    etcdWith(func(e *druidcorev1alpha1.Etcd) { e.Spec.Backup.Store.SecretRef.Namespace = shootNS }),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}, want: "https://minio.example.com:9000"},
		{name: "bucket of another provider type", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("gcp", nil, ""), etcdBackup(minio)}},
		{name: "bucket of another class", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", &seed, ""), etcdBackup(minio)}},
		{name: "bucket of a served class", p: awsP, classes: []extensionsv1alpha1.ExtensionClass{seed}, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", &seed, ""), etcdBackup(minio)}, want: "https://minio.example.com:9000"},
		{name: "container is no BackupBucket of this seed", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{etcdBackup(minio)}},
		{name: "no backup store", p: awsP, etcd: etcdWith(func(e *druidcorev1alpha1.Etcd) { e.Spec.Backup.Store = nil }),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}},
		{name: "no secretRef", p: awsP, etcd: etcdWith(func(e *druidcorev1alpha1.Etcd) { e.Spec.Backup.Store.SecretRef = nil }),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}},
		{name: "missing secret: allowed with a warning", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", nil, "")}, warning: "the backup secret shoot--dev--a/etcd-backup does not exist"},
		{name: "unusable endpoint: denied naming the key, not the value", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(map[string]string{"endpoint": "minio.internal:9000", "region": "eu-1"})},
			denied:  `secret key "endpoint"`, notInText: "minio.internal"},
		{name: "providerConfig that does not decode: denied naming the field", p: awsP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", nil, `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","nonsense":1}`), etcdBackup(minio)},
			denied:  "spec.providerConfig"},
		{name: "deletion is not looked at", p: awsP, op: admissionv1.Delete, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("aws", nil, ""), etcdBackup(minio)}},
		{name: "gcp storageAPIEndpoint", p: gcpP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("gcp", nil, ""), etcdBackup(map[string]string{"bucketName": bucket, "serviceaccount.json": "{}", "storageAPIEndpoint": "https://storage.me-central2.rep.googleapis.com/storage/v1/"})},
			want:    "https://storage.me-central2.rep.googleapis.com/storage/v1/"},
		{name: "gcp store.endpointOverride of provider-gcp's providerConfig wins over the secret's", p: gcpP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("gcp", nil, `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","store":{"endpointOverride":"https://storage.europe-west3.rep.googleapis.com/"}}`), etcdBackup(map[string]string{"bucketName": bucket, "serviceaccount.json": "{}", "storageAPIEndpoint": "https://storage.me-central2.rep.googleapis.com/storage/v1/"})},
			want:    "https://storage.europe-west3.rep.googleapis.com/"},
		{name: "gcp without an endpoint", p: gcpP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("gcp", nil, ""), etcdBackup(map[string]string{"bucketName": bucket, "serviceaccount.json": "{}"})}},
		{name: "azure sovereign cloud", p: azureP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("azure", nil, ""), etcdBackup(azureAccount("blob.core.chinacloudapi.cn"))},
			want:    "https://acct1.blob.core.chinacloudapi.cn"},
		{name: "azure public cloud: the sidecar's default", p: azureP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("azure", nil, ""), etcdBackup(azureAccount("blob.core.windows.net"))}},
		{name: "azure emulator host:port: not expressible", p: azureP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("azure", nil, ""), etcdBackup(azureAccount("127.0.0.1:10000"))}},
		{name: "openstack: the auth URL is no object-store endpoint", p: osP, etcd: etcdWith(nil),
			objects: []client.Object{backupBucket("openstack", nil, ""), etcdBackup(map[string]string{"authURL": "https://keystone.example.com/v3", "bucketName": bucket})}},
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := etcdendpoint.Handler{Provider: c.p, Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(c.objects...).Build(), ExtensionClasses: c.classes, Log: logr.Discard()}
			raw, err := json.Marshal(c.etcd)
			if err != nil {
				t.Fatal(err)
			}
			op := c.op
			if op == "" {
				op = admissionv1.Update
			}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op, Namespace: shootNS, Object: runtime.RawExtension{Raw: raw}}}
			resp := h.Handle(context.Background(), req)

			text := strings.Join(resp.Warnings, "\n")
			if resp.Result != nil {
				text += "\n" + resp.Result.Message
			}
			if c.notInText != "" && strings.Contains(text, c.notInText) {
				t.Errorf("the response shows a value: %q", text)
			}
			if c.denied != "" {
				if resp.Allowed || !strings.Contains(resp.Result.Message, c.denied) || !strings.Contains(resp.Result.Message, etcdendpoint.FieldPath) {
					t.Fatalf("allowed %v, message %q; want denied with %q and the field path", resp.Allowed, resp.Result.Message, c.denied)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if c.warning != "" && !strings.Contains(text, c.warning) {
				t.Errorf("warnings %q; want one with %q", resp.Warnings, c.warning)
			}
			if c.warning == "" && len(resp.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", resp.Warnings)
			}
			if c.want == "" {
				if len(resp.Patches) > 0 {
					t.Fatalf("patches %+v; want none", resp.Patches)
				}
				return
			}
			if len(resp.Patches) != 1 || resp.Patches[0].Operation != "add" || resp.Patches[0].Path != "/spec/backup/store/endpointOverride" || resp.Patches[0].Value != c.want {
				t.Fatalf("patches %+v; want one add of %q", resp.Patches, c.want)
			}
		})
	}
}
