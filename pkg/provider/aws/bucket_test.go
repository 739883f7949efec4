// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// ensure reconciles bucket name with cfg as the BackupBucket actuator does: a store built from
// the secret's data and the config, then EnsureBucket.
func ensure(t *testing.T, data map[string][]byte, name string, cfg *awsapi.BackupBucketConfig) error {
	t.Helper()
	return newStoreWith(t, &awsprovider.Provider{}, data, cfg).EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "eu-central-1"})
}

func TestSettingsAreConvergedAndDriftIsCorrected(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	assertSettings := func(stage string) {
		t.Helper()
		enc, err := raw.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name})
		if err != nil || enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
			t.Fatalf("%s: default encryption is not SSE-S3: %v", stage, err)
		}
		pol, err := raw.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name})
		if err != nil {
			t.Fatalf("%s: no bucket policy: %v", stage, err)
		}
		var doc struct {
			Statement []struct {
				Effect    string
				Condition map[string]map[string]any
				Resource  any
			}
		}
		if err := json.Unmarshal([]byte(aws.ToString(pol.Policy)), &doc); err != nil || len(doc.Statement) != 1 ||
			doc.Statement[0].Effect != "Deny" || strings.Trim(fmt.Sprint(doc.Statement[0].Condition["Bool"]["aws:SecureTransport"]), "[]") != "false" ||
			!strings.Contains(fmt.Sprint(doc.Statement[0].Resource), name+"/*") {
			t.Fatalf("%s: the bucket policy does not deny non-TLS requests on the bucket and its objects: %s", stage, aws.ToString(pol.Policy))
		}
	}
	assertSettings("after creation")

	// Drift: someone removes encryption and the policy behind the extension's back.
	if _, err := raw.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	assertSettings("after drift and a reconcile")
}

// TestAnUnchangedBucketIsNotWritten: a second reconcile of a bucket whose settings are all as
// declared reads them and writes nothing (a seed's bucket is reconciled on every rotation and
// spec change; a write that changes nothing is a request, and an audit event, for nothing).
func TestAnUnchangedBucketIsNotWritten(t *testing.T) {
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{OnRequest: func(r *http.Request, status int) { t.Logf("%s %s %d", r.Method, r.URL.RawQuery, status) }})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	data := withData(minio.SecretData(), "endpoint", proxy.URL)
	name := newBucketName()
	if err := ensure(t, data, name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	before := proxy.Methods()
	if err := ensure(t, data, name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	after := proxy.Methods()
	for _, method := range []string{http.MethodPut, http.MethodPost, http.MethodDelete} {
		if n := after[method] - before[method]; n != 0 {
			t.Errorf("a reconcile of an unchanged bucket sent %d %s requests; want none", n, method)
		}
	}
}

func TestUnimplementedSettingIsReportedAndCanBeSwitchedOff(t *testing.T) {
	noKMS, err := awsstack.StartMinIO(context.Background(), awsstack.MinIOOptions{Region: "eu-central-1", WithoutKMS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer noKMS.Stop()
	name := newBucketName()
	err = ensure(t, noKMS.SecretData(), name, minioConfig())
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), string(awsapi.SettingDefaultEncryption)) {
		t.Fatalf("got %v; want ErrUnsupported naming the DefaultEncryption switch", err)
	}
	cfg := minioConfig()
	cfg.DisabledSettings = append(cfg.DisabledSettings, awsapi.SettingDefaultEncryption)
	if err := ensure(t, noKMS.SecretData(), name, cfg); err != nil {
		t.Fatalf("with DefaultEncryption switched off: %v", err)
	}
}

func immutable(mode string, days int) *awsapi.BackupBucketConfig {
	cfg := minioConfig()
	cfg.Immutability = &awsapi.ImmutableConfig{RetentionType: awsapi.RetentionTypeBucket, Mode: mode, RetentionPeriod: metav1.Duration{Duration: time.Duration(days) * 24 * time.Hour}}
	return cfg
}

func TestComplianceRetentionIsNeverWeakened(t *testing.T) {
	raw, name := minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeCompliance, 2)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  *awsapi.BackupBucketConfig
	}{
		{"to governance", immutable(awsapi.ModeGovernance, 2)},
		{"shorter", immutable(awsapi.ModeCompliance, 1)},
		{"removed", minioConfig()},
	}
	for _, c := range cases {
		if err := ensure(t, minio.SecretData(), name, c.cfg); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("%s: got %v; want ErrInvalidConfig", c.name, err)
		}
	}
	lock, err := raw.GetObjectLockConfiguration(context.Background(), &s3.GetObjectLockConfigurationInput{Bucket: &name})
	if err != nil || aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 2 || lock.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeCompliance {
		t.Fatalf("a refused change touched the retention: %+v, %v", lock, err)
	}
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeCompliance, 3)); err != nil {
		t.Fatalf("extending a compliance retention must work: %v", err)
	}
}

// TestALongerRetentionIsKept: a governance default retention longer than declared (set by
// someone else, or by an earlier declaration) is kept, never shortened, and one that is no
// longer declared is not removed; the plan names each as kept. A shorter one, or none, becomes
// the declared one.
func TestALongerRetentionIsKept(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	b := objectstore.Bucket{Name: name, Region: "eu-central-1"}
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	retention := func() (types.ObjectLockRetentionMode, int32) {
		t.Helper()
		lock, err := raw.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &name})
		if err != nil {
			t.Fatal(err)
		}
		if r := lock.ObjectLockConfiguration.Rule; r != nil && r.DefaultRetention != nil {
			return r.DefaultRetention.Mode, aws.ToInt32(r.DefaultRetention.Days)
		}
		return "", 0
	}
	// Someone sets a longer retention.
	if _, err := raw.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled,
		Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(5)}}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  *awsapi.BackupBucketConfig
	}{{"declared shorter", immutable(awsapi.ModeGovernance, 1)}, {"not declared", minioConfig()}} {
		store := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), c.cfg)
		if got := conformance.Plan(ctx, t, store.Management.(objectstore.BucketPlanner), b); !slices.Equal(got, []string{"keep Object Lock default retention"}) {
			t.Errorf("%s: plan %v; want the retention named as kept", c.name, got)
		}
		if err := store.EnsureBucket(ctx, b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if mode, days := retention(); mode != types.ObjectLockRetentionModeGovernance || days != 5 {
			t.Fatalf("%s: retention %s, %d days; want the longer governance, 5 days, kept", c.name, mode, days)
		}
	}
	// Declared longer: ours.
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 7)); err != nil {
		t.Fatal(err)
	}
	if mode, days := retention(); mode != types.ObjectLockRetentionModeGovernance || days != 7 {
		t.Fatalf("declared longer: retention %s, %d days; want governance, 7 days", mode, days)
	}
	// Compliance declared, shorter than the governance there: compliance, with the longer period.
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeCompliance, 2)); err != nil {
		t.Fatal(err)
	}
	if mode, days := retention(); mode != types.ObjectLockRetentionModeCompliance || days != 7 {
		t.Fatalf("compliance declared shorter: retention %s, %d days; want compliance, 7 days", mode, days)
	}
}
