// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package aws_test runs the real aws controllers in a manager against a real kube-apiserver and
// etcd (envtest) and a real MinIO, driven the way gardenlet drives them.
package aws_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const region = "eu-central-1"

// minioConfig is the providerConfig an operator of MinIO sets: MinIO implements neither the
// public access block nor multipart-abort lifecycle rules.
const minioConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`

// foreignPrefix names buckets the proxy plays as owned by another account.
const foreignPrefix = "foreign-"

var (
	env   *framework.Env
	minio *awsstack.MinIO
	// proxy sits in front of MinIO and plays "owned by another account" for buckets named foreign-*.
	proxy *stack.Proxy
	// iam is the IAM (and STS) stand-in, its keys enforced by MinIO: the IAM entry issuer's.
	iam *awsstack.IAM
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if minio, err = awsstack.StartMinIO(context.Background(), awsstack.MinIOOptions{Region: region}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer minio.Stop()
	if proxy, err = stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ForeignPrefix: foreignPrefix}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer proxy.Close()
	iam = awsstack.StartIAM()
	defer iam.Close()
	if err = iam.EnforceOn(minio); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = framework.Start(&awsprovider.Provider{IAMEndpoint: iam.URL, STSEndpoint: iam.URL}, region); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}

// secretData returns MinIO credentials reaching MinIO through endpoint.
func secretData(endpoint string, kv ...string) map[string][]byte {
	d := minio.SecretData()
	d["endpoint"] = []byte(endpoint)
	delete(d, "region")
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i]] = []byte(kv[i+1])
	}
	return d
}
