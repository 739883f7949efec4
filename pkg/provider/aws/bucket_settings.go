// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
)

// convergeEncryption, convergePublicAccessBlock and convergeTLSPolicy read the setting first and
// write only when it differs: a seed's bucket is reconciled on every change of its spec or
// secret and on every rotation, and a write that changes nothing still costs a request (and, for
// the policy, a CloudTrail management event). A read that fails (not set yet, or credentials
// allowed to write but not to read it) falls through to the write, whose answer is the one that
// counts.
func (s *management) convergeEncryption(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig) error {
	rule := types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAes256}
	if cfg.Encryption != nil && cfg.Encryption.Type == awsapi.EncryptionSSEKMS {
		rule = types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(cfg.Encryption.KMSKeyID)}
	}
	if current, err := s.client.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name}); err == nil && sameEncryption(current.ServerSideEncryptionConfiguration, rule) {
		return nil
	}
	_, err := s.client.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: &name,
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &rule}}}})
	return s.bucketError(name, err)
}

// sameEncryption reports whether current is exactly the one default rule want.
func sameEncryption(current *types.ServerSideEncryptionConfiguration, want types.ServerSideEncryptionByDefault) bool {
	if current == nil || len(current.Rules) != 1 || current.Rules[0].ApplyServerSideEncryptionByDefault == nil {
		return false
	}
	got := current.Rules[0].ApplyServerSideEncryptionByDefault
	return got.SSEAlgorithm == want.SSEAlgorithm && aws.ToString(got.KMSMasterKeyID) == aws.ToString(want.KMSMasterKeyID)
}

func (s *management) convergePublicAccessBlock(ctx context.Context, name string, _ *awsapi.BackupBucketConfig) error {
	if current, err := s.client.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: &name}); err == nil && current.PublicAccessBlockConfiguration != nil {
		if c := current.PublicAccessBlockConfiguration; aws.ToBool(c.BlockPublicAcls) && aws.ToBool(c.BlockPublicPolicy) && aws.ToBool(c.IgnorePublicAcls) && aws.ToBool(c.RestrictPublicBuckets) {
			return nil
		}
	}
	on := aws.Bool(true)
	_, err := s.client.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: &name,
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{BlockPublicAcls: on, BlockPublicPolicy: on, IgnorePublicAcls: on, RestrictPublicBuckets: on}})
	return s.bucketError(name, err)
}

// TLSOnlyPolicy is the bucket policy that denies every request not made over TLS, on the bucket
// and on every object in it.
func TLSOnlyPolicy(bucket string) string {
	policy := map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{{
			"Sid":       "DenyInsecureTransport",
			"Effect":    "Deny",
			"Principal": "*",
			"Action":    "s3:*",
			"Resource":  []string{"arn:aws:s3:::" + bucket, "arn:aws:s3:::" + bucket + "/*"},
			"Condition": map[string]any{"Bool": map[string]string{"aws:SecureTransport": "false"}},
		}},
	}
	out, _ := json.Marshal(policy)
	return string(out)
}

func (s *management) convergeTLSPolicy(ctx context.Context, name string, _ *awsapi.BackupBucketConfig) error {
	if current, err := s.client.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name}); err == nil && samePolicy(aws.ToString(current.Policy), TLSOnlyPolicy(name)) {
		return nil
	}
	_, err := s.client.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &name, Policy: aws.String(TLSOnlyPolicy(name))})
	return s.bucketError(name, err)
}

// samePolicy compares two policy documents by meaning: stores give the document back in their own
// form (MinIO: every value a list, `"Principal": {"AWS": ["*"]}` for `"Principal": "*"`). A
// difference it does not know to be none is a difference: the policy is then written again.
func samePolicy(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(canonicalPolicy("", x), canonicalPolicy("", y))
}

// canonicalPolicy rewrites a policy value (under key) so that equal meanings compare equal: a
// one-element list is its element, lists are in a fixed order, and the principal "*" is
// {"AWS": "*"}.
func canonicalPolicy(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = canonicalPolicy(k, e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canonicalPolicy(key, e)
		}
		if len(out) == 1 {
			return out[0]
		}
		slices.SortFunc(out, func(p, q any) int {
			a, _ := json.Marshal(p)
			b, _ := json.Marshal(q)
			return strings.Compare(string(a), string(b))
		})
		return out
	case string:
		if key == "Principal" && v == "*" {
			return map[string]any{"AWS": "*"}
		}
	}
	return v
}
