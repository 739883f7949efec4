// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

func TestCredentialErrorsNameTheKeyAndHideTheValue(t *testing.T) {
	good := gcs.SecretData()
	externalAccount := `{"type":"external_account","audience":"a","subject_token_type":"t","token_url":"https://sts.example","credential_source":{"file":"/etc/passwd"}}`
	cases := []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no key file", with(good, "serviceaccount.json", ""), `"serviceaccount.json"`},
		{"not JSON", with(good, "serviceaccount.json", "secret-garbage"), `"serviceaccount.json" is not a service-account key file`},
		{"external account instead of a key", with(good, "serviceaccount.json", externalAccount), `found type "external_account"`},
		{"no project", with(good, "serviceaccount.json", `{"type":"service_account","client_email":"a@b","private_key":"secret-garbage"}`), "no project_id"},
		{"plain http to a remote endpoint", with(good, "storageAPIEndpoint", "http://storage.example.com/storage/v1/"), "plain http"},
		{"endpoint with a query", with(good, "storageAPIEndpoint", "https://storage.example.com/storage/v1/?key=secret-garbage"), "query"},
		{"endpoint with another path", with(good, "storageAPIEndpoint", "https://storage.example.com/upload/"), "path"},
		{"endpoint scheme", with(good, "storageAPIEndpoint", "ftp://storage.example.com/"), "scheme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := testProvider.NewDataPlane(context.Background(), provider.Credentials{Data: c.data, Region: region})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig mentioning %s", err, c.want)
			}
			if strings.Contains(err.Error(), "secret-garbage") || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("the error leaks a secret value: %v", err)
			}
		})
	}
}

func TestEtcdBackupSecretData(t *testing.T) {
	p := &gcpprovider.Provider{}
	entry := func(name string) *extensionsv1alpha1.BackupEntry {
		return &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	key := gcs.ServiceAccountKey("etcd@geb-test-project.iam.gserviceaccount.com")
	static, err := p.EtcdBackupSecretData(entry("shoot--a--b--1"), map[string][]byte{
		"serviceaccount.json": key, "storageAPIEndpoint": []byte("https://storage.europe-west1.rep.googleapis.com/storage/v1/"),
		"bucketName": []byte("geb-bucket"), "stray.json": []byte("{}"), "other": []byte("x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if keys := sortedKeys(static); !slices.Equal(keys, []string{"bucketName", "serviceaccount.json", "storageAPIEndpoint"}) {
		t.Fatalf("static keys %v", keys)
	}
	for _, c := range []struct{ entry, dir string }{{"shoot--a--b--1", "/var/.gcp/token"}, {"source-shoot--a--b--1", "/var/.source-gcp/token"}} {
		wi, err := p.EtcdBackupSecretData(entry(c.entry), map[string][]byte{"config": sidecarWorkloadIdentityConfig(gcs.ProjectID, nil), "bucketName": []byte("geb-bucket")})
		if err != nil {
			t.Fatal(err)
		}
		if keys := sortedKeys(wi); !slices.Equal(keys, []string{"bucketName", "credentialsConfig", "projectID", "serviceaccount.json"}) {
			t.Fatalf("workload identity keys %v", keys)
		}
		var cc map[string]any
		if err := json.Unmarshal(wi["serviceaccount.json"], &cc); err != nil {
			t.Fatal(err)
		}
		if src, _ := cc["credential_source"].(map[string]any); src["file"] != c.dir || cc["type"] != "external_account" || cc["universe_domain"] != "googleapis.com" || string(wi["projectID"]) != gcs.ProjectID {
			t.Fatalf("%s: sidecar credentials %v, project %q", c.entry, cc, wi["projectID"])
		}
	}
	if _, err := p.EtcdBackupSecretData(entry("shoot--a--b--1"), map[string][]byte{"bucketName": []byte("geb-bucket")}); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("without credentials: %v; want ErrInvalidConfig", err)
	}
}

func sortedKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
