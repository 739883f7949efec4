// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// stsStandIn plays AWS STS's AssumeRoleWithWebIdentity (no emulator exists here): it records the
// role and token it is asked for and answers with credentials the real MinIO accepts, so that the
// whole chain (secret -> STS -> signed S3 requests) is exercised.
type stsStandIn struct {
	mu       sync.Mutex
	requests []url.Values
}

func (s *stsStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	s.requests = append(s.requests, r.Form)
	s.mu.Unlock()
	if r.Form.Get("Action") != "AssumeRoleWithWebIdentity" {
		http.Error(w, "unexpected action", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken></SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/backup/session</Arn><AssumedRoleId>AROA:session</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult>
<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`, minio.AccessKey, minio.SecretKey)
}

func TestWorkloadIdentityAssumesTheRoleWithTheToken(t *testing.T) {
	sts := &stsStandIn{}
	srv := httptest.NewServer(sts)
	defer srv.Close()
	p := &awsprovider.Provider{STSEndpoint: srv.URL}
	const role = "arn:aws:iam::123456789012:role/backup"
	data := map[string][]byte{
		"config":           []byte("apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: " + role + "\n"),
		"token":            []byte("the-projected-token"),
		"endpoint":         []byte(minio.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	}
	store, err := p.NewManagement(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: true, Region: "eu-central-1"}, minioConfig())
	if err != nil {
		t.Fatal(err)
	}
	name := newBucketName()
	if err := store.EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "eu-central-1"}); err != nil {
		t.Fatalf("S3 calls with the assumed role's credentials: %v", err)
	}
	sts.mu.Lock()
	defer sts.mu.Unlock()
	if len(sts.requests) == 0 {
		t.Fatal("STS was never asked")
	}
	if got := sts.requests[0]; got.Get("RoleArn") != role || got.Get("WebIdentityToken") != "the-projected-token" {
		t.Fatalf("STS was asked for role %q with token %q", got.Get("RoleArn"), got.Get("WebIdentityToken"))
	}

	delete(data, "token")
	if _, err := p.NewDataPlane(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: true, Region: "eu-central-1"}); err == nil {
		t.Fatal("a workload identity secret without a token was accepted")
	}
}

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	stack.CheckProbeIsOneCountedRequest(t, newStore(t, minio.SecretData()), awsprovider.Type, newBucketName())
}
