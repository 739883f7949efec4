// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// gcp: fake-gcs-server behind the GCS front (OAuth, bucket settings, the IAM API for generated
// keys). Handle is the *gcpstack.GCS.
func init() {
	standin.Register(standin.StandIn{
		Type: gcpprovider.Type, Region: "europe-west1", Tools: []string{"fakegcs"},
		// etcd-backup-restore's GCS store (gcs_snapstore.go: GOOGLE_APPLICATION_CREDENTIALS is
		// <dir>/serviceaccount.json, storageAPIEndpoint beside it); bucketName is gardener's.
		EtcdBackupKeys: []string{"serviceaccount.json", "storageAPIEndpoint", "bucketName"},
		Start: func(_ context.Context, t testing.TB, region string) (*standin.World, error) {
			gcs, err := gcpstack.StartGCS(gcpstack.GCSOptions{})
			if err != nil {
				return nil, err
			}
			cloud := framework.Registered(&gcpprovider.Provider{IAMEndpoint: gcs.URL + "/", QuotasEndpoint: gcs.URL + "/"})
			operator := gcs.SecretData()
			return &standin.World{
				What:     "fake-gcs-server behind the GCS stand-in front (OAuth, bucket settings)",
				Where:    fmt.Sprintf("GCS endpoint %s, project %s", gcs.Endpoint, gcs.ProjectID),
				Cloud:    cloud,
				Operator: operator,
				Consumer: gcpstack.GCSConsumer(t, gcs),
				Describe: func(ctx context.Context, name string) (string, error) {
					data, err := cloud.NewDataPlane(ctx, provider.Credentials{Data: operator, Region: region})
					if err != nil {
						return "", err
					}
					if err := data.ListObjects(ctx, name, "", func([]objectstore.ObjectVersion) error { return nil }); err != nil {
						return "", err
					}
					iam, _ := gcs.BucketField(name, "iamConfiguration")
					labels, _ := gcs.BucketField(name, "labels")
					var lc struct {
						Rule []json.RawMessage `json:"rule"`
					}
					raw, _ := gcs.BucketField(name, "lifecycle")
					_ = json.Unmarshal(raw, &lc)
					return fmt.Sprintf("iamConfiguration %s; %d lifecycle rules; labels %s", iam, len(lc.Rule), labels), nil
				},
				Handle: gcs,
				Stop:   gcs.Stop,
			}, nil
		},
	})
}
