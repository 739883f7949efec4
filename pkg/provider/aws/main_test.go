// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// minio is the real S3 stand-in shared by the tests of this package (region eu-central-1, so
// that bucket creation needs a LocationConstraint as on AWS).
var minio *awsstack.MinIO

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	var err error
	minio, err = awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting MinIO:", err)
		os.Exit(1)
	}
	code := m.Run()
	minio.Stop()
	os.Exit(code)
}

var newBucketName = stack.NewBucketName

func newStore(t testing.TB, data map[string][]byte) conformance.Stores {
	t.Helper()
	return newStoreWith(t, &awsprovider.Provider{}, data, nil)
}

// newStoreWith builds the planes and the Writer of p, the management plane with the bucket
// config cfg (nil: the defaults).
func newStoreWith(t testing.TB, p *awsprovider.Provider, data map[string][]byte, cfg *awsapi.BackupBucketConfig) conformance.Stores {
	t.Helper()
	if cfg == nil {
		cfg = &awsapi.BackupBucketConfig{}
	}
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: "eu-central-1"}, cfg)
}

var withData = stack.With

// withoutRegion drops the secret's region override, so that the bucket's declared region counts.
func withoutRegion(data map[string][]byte) map[string][]byte {
	delete(data, "region")
	return data
}

func providerCreds(data map[string][]byte) provider.Credentials {
	return provider.Credentials{Data: data}
}
