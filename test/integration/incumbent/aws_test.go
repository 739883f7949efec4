// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const awsRegion = "eu-central-1"

// awsConfig is the seed's providerConfig as an operator of provider-aws has it (its apiVersion),
// Object Lock for a day so that every snapshot is locked and every deletion is deferred.
const awsConfig = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`

// awsWorld is MinIO behind the S3 proxy (awsstack.S3Gaps) for gardener-extension-provider-aws
// v1.73.0. Its S3 endpoint is not an input of its code: aws-sdk-go-v2's LoadDefaultConfig
// (pkg/aws/client/client.go:122 at v1.73.0) reads AWS_ENDPOINT_URL_S3, set to the proxy.
type awsWorld struct {
	dir   string
	minio *awsstack.MinIO
	gaps  *awsstack.S3Gaps
	s3    *s3.Client // through the proxy: what both extensions see
	// before are the versions listed when the incumbent had deferred entry a.
	before map[string]map[string]string
}

func startAWS(t *testing.T, dir string) world {
	t.Helper()
	minio, err := awsstack.StartMinIO(context.Background(), awsstack.MinIOOptions{Region: awsRegion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minio.Stop)
	gaps, err := awsstack.StartS3Gaps(minio)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gaps.Close)
	return &awsWorld{dir: dir, minio: minio, gaps: gaps,
		s3: s3.New(s3.Options{Region: awsRegion, BaseEndpoint: aws.String(gaps.URL), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(minio.AccessKey, minio.SecretKey, ""), RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired})}
}

func (w *awsWorld) attach(k8s client.Client) *framework.Env {
	return framework.Attach(k8s, &awsprovider.Provider{}, awsRegion)
}

// secretData: both extensions and the sidecar reach MinIO through the proxy (the incumbent
// through AWS_ENDPOINT_URL_S3; it copies the keys into etcd-backup).
func (w *awsWorld) secretData() map[string][]byte {
	data := w.minio.SecretData()
	data["endpoint"] = []byte(w.gaps.URL)
	return data
}

func (w *awsWorld) incumbentConfig() string  { return awsConfig }
func (w *awsWorld) handBackConfig() string   { return withHandBack(awsConfig) }
func (w *awsWorld) extensionFlags() []string { return nil }
func (w *awsWorld) incumbentArgs() []string  { return nil }
func (w *awsWorld) defers() bool             { return true }

func (w *awsWorld) consumer(*testing.T) stack.Consumer { return awsstack.S3Consumer }

func (w *awsWorld) incumbentEnv() []string {
	return []string{"AWS_ENDPOINT_URL_S3=" + w.gaps.URL, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(w.dir, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(w.dir, "none")}
}

func (w *awsWorld) incumbentMadeBucket(t *testing.T, bucket, log string) {
	t.Helper()
	if calls := strings.Join(w.gaps.Calls(), ","); !strings.Contains(calls, "PUT "+bucket+"?publicAccessBlock") || !strings.Contains(calls, "lifecycle (AbortIncompleteMultipartUpload)") {
		t.Fatalf("the incumbent's bucket creation did not pass the proxy as its code does it: %s\n%s", calls, log)
	}
}

// incumbentDeferred: every version is locked, so the incumbent tags them and adds its rule.
func (w *awsWorld) incumbentDeferred(t *testing.T, bucket, _ string) {
	t.Helper()
	before, _, rules := w.versions(t, bucket)
	if !slices.Contains(rules, awsprovider.IncumbentDeferralRule) {
		t.Fatalf("the incumbent's deletion left rules %v; want its %s", rules, awsprovider.IncumbentDeferralRule)
	}
	w.before = before
}

func (w *awsWorld) adopted(t *testing.T, bucket, deferredEntry string) {
	t.Helper()
	_, covered, rules := w.versions(t, bucket)
	if !slices.Contains(rules, awsprovider.AdoptedRule) {
		t.Fatalf("rules after the takeover %v; want %s", rules, awsprovider.AdoptedRule)
	}
	for id := range w.before {
		if strings.HasPrefix(id, deferredEntry+"/") && !slices.Contains(covered[id], awsprovider.AdoptedRule) {
			t.Errorf("%s, deferred by the incumbent, is in scope of %v; want %s", id, covered[id], awsprovider.AdoptedRule)
		}
	}
}

// weDeferred: ours defers under Object Lock with both tags.
func (w *awsWorld) weDeferred(t *testing.T, bucket, entry string) {
	t.Helper()
	tags, covered, _ := w.versions(t, bucket)
	for id, tg := range tags {
		if strings.HasPrefix(id, entry+"/") && (tg[awsprovider.IncumbentDeferralTag] != "true" || !slices.Contains(covered[id], awsprovider.DeferredDeletionRule)) {
			t.Errorf("%s deferred by us carries %v, in scope of %v", id, tg, covered[id])
		}
	}
}

func (w *awsWorld) handedBack(t *testing.T, bucket string) {
	t.Helper()
	_, _, rules := w.versions(t, bucket)
	rules = slices.DeleteFunc(rules, func(id string) bool { return id == awsOperatorRuleID }) // foreign: checked as such
	if want := []string{"", awsprovider.IncumbentDeleteMarkersRule, awsprovider.IncumbentDeferralRule}; !slices.Equal(rules, want) {
		t.Fatalf("rules after the hand-back %v; want the incumbent's %v (the abort rule without an ID)", rules, want)
	}
}

func (w *awsWorld) ended(t *testing.T, bucket string) {
	t.Helper()
	tags, covered, rules := w.versions(t, bucket)
	for id := range tags {
		if !slices.Contains(covered[id], awsprovider.IncumbentDeferralRule) {
			t.Errorf("after the incumbent's deletions: %s (tags %v) is in scope of no rule of the incumbent (rules %v)", id, tags[id], rules)
		}
	}
}

// versions lists every version of the bucket with its tags, the bucket's rule IDs, and for every
// version the IDs of the enabled expiring tag-scoped rules that take it in.
func (w *awsWorld) versions(t *testing.T, bucket string) (map[string]map[string]string, map[string][]string, []string) {
	t.Helper()
	ctx := context.Background()
	var rules []types.LifecycleRule
	if lc, err := w.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket}); err == nil {
		rules = lc.Rules
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, aws.ToString(r.ID))
	}
	slices.Sort(ids)
	tags, covered := map[string]map[string]string{}, map[string][]string{}
	pages := s3.NewListObjectVersionsPaginator(w.s3, &s3.ListObjectVersionsInput{Bucket: &bucket})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out.Versions {
			id := aws.ToString(v.Key) + "@" + aws.ToString(v.VersionId)
			tg, err := w.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: v.Key, VersionId: v.VersionId})
			if err != nil {
				t.Fatal(err)
			}
			tags[id] = map[string]string{}
			for _, tag := range tg.TagSet {
				tags[id][aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
			for _, r := range rules {
				f := r.Filter
				expires := r.Expiration != nil && aws.ToInt32(r.Expiration.Days) > 0
				if r.Status == types.ExpirationStatusEnabled && expires && f != nil && f.Tag != nil && tags[id][aws.ToString(f.Tag.Key)] == aws.ToString(f.Tag.Value) {
					covered[id] = append(covered[id], aws.ToString(r.ID))
				}
			}
		}
	}
	return tags, covered, ids
}

// awsOperatorRuleID is an operator's lifecycle rule under reports/ (an expiry: MinIO has no
// storage class to transition to without a tier).
const awsOperatorRuleID = "operator-reports-expiry"

// addForeign adds an operator's statement (OperatorAuditRead: an audit role may read reports/)
// to the policy provider-aws wrote (its s3:TlsVersion statement), and an operator's rule under
// reports/ to its lifecycle.
func (w *awsWorld) addForeign(t *testing.T, bucket string) {
	t.Helper()
	ctx := context.Background()
	out, err := w.s3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("provider-aws's bucket has no policy: %v", err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &doc); err != nil {
		t.Fatal(err)
	}
	statements, _ := doc["Statement"].([]any)
	doc["Statement"] = append(statements, map[string]any{"Sid": "OperatorAuditRead", "Effect": "Allow",
		"Principal": map[string]any{"AWS": []string{"arn:aws:iam::111122223333:role/audit"}},
		"Action":    []string{"s3:GetObject"}, "Resource": []string{"arn:aws:s3:::" + bucket + "/reports/*"}})
	policy, _ := json.Marshal(doc)
	if _, err := w.s3.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &bucket, Policy: aws.String(string(policy))}); err != nil {
		t.Fatal(err)
	}
	var rules []types.LifecycleRule
	if lc, err := w.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket}); err == nil {
		rules = lc.Rules
	}
	rules = append(rules, types.LifecycleRule{ID: aws.String(awsOperatorRuleID), Status: types.ExpirationStatusEnabled,
		Filter: &types.LifecycleRuleFilter{Prefix: aws.String("reports/")}, Expiration: &types.LifecycleExpiration{Days: aws.Int32(400)}})
	if _, err := w.s3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: &bucket,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
	got := w.foreign(t, bucket)
	if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "s3:TlsVersion") }) ||
		!slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "OperatorAuditRead") }) ||
		!slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, awsOperatorRuleID) }) {
		t.Fatalf("the bucket's foreign settings %v; want provider-aws's s3:TlsVersion statement, OperatorAuditRead and %s", got, awsOperatorRuleID)
	}
}

// foreign is every policy statement but this extension's (Sid awsprovider.TLSOnlySid), and the
// operator's rule, each as JSON (keys sorted), sorted.
func (w *awsWorld) foreign(t *testing.T, bucket string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if p, err := w.s3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &bucket}); err == nil {
		var doc struct{ Statement []map[string]any }
		if err := json.Unmarshal([]byte(aws.ToString(p.Policy)), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Statement {
			if st["Sid"] != awsprovider.TLSOnlySid {
				b, _ := json.Marshal(st)
				out = append(out, "statement "+string(b))
			}
		}
	}
	if lc, err := w.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket}); err == nil {
		for _, r := range lc.Rules {
			if aws.ToString(r.ID) == awsOperatorRuleID {
				b, _ := json.Marshal(r)
				out = append(out, "rule "+string(b))
			}
		}
	}
	slices.Sort(out)
	return out
}
