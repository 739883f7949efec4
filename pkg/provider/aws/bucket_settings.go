// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// planEncryption, planPublicAccessBlock and planTLSPolicy read the setting first and write only
// when it differs: a seed's bucket is reconciled on every change of its spec or secret and on
// every rotation, and a write that changes nothing still costs a request (and, for the policy, a
// CloudTrail management event). An encryption or access block read that fails (not set yet, or
// credentials allowed to write but not to read it) falls through to the write, whose answer is
// the one that counts: both are whole settings of this extension. The policy is shared with
// others: it is never written without having been read (see planTLSPolicy).
func (s *management) planEncryption(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, _ *bool) ([]pending, error) {
	rule := types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAes256}
	if cfg.Encryption != nil && cfg.Encryption.Type == awsapi.EncryptionSSEKMS {
		rule = types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(cfg.Encryption.KMSKeyID)}
	}
	current, err := s.client.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name})
	if err == nil && sameEncryption(current.ServerSideEncryptionConfiguration, rule) {
		return nil, nil
	}
	return []pending{{
		change: objectstore.BucketChange{Setting: "default encryption", Action: objectstore.ChangeUpdate, Detail: "-> " + string(rule.SSEAlgorithm)},
		apply: func(ctx context.Context) error {
			_, err := s.client.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: &name,
				ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &rule}}}})
			return s.bucketError(name, err)
		},
	}}, nil
}

// sameEncryption reports whether current is exactly the one default rule want.
func sameEncryption(current *types.ServerSideEncryptionConfiguration, want types.ServerSideEncryptionByDefault) bool {
	if current == nil || len(current.Rules) != 1 || current.Rules[0].ApplyServerSideEncryptionByDefault == nil {
		return false
	}
	got := current.Rules[0].ApplyServerSideEncryptionByDefault
	return got.SSEAlgorithm == want.SSEAlgorithm && aws.ToString(got.KMSMasterKeyID) == aws.ToString(want.KMSMasterKeyID)
}

func (s *management) planPublicAccessBlock(ctx context.Context, name string, _ *awsapi.BackupBucketConfig, _ *bool) ([]pending, error) {
	if current, err := s.client.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: &name}); err == nil && current.PublicAccessBlockConfiguration != nil {
		if c := current.PublicAccessBlockConfiguration; aws.ToBool(c.BlockPublicAcls) && aws.ToBool(c.BlockPublicPolicy) && aws.ToBool(c.IgnorePublicAcls) && aws.ToBool(c.RestrictPublicBuckets) {
			return nil, nil
		}
	}
	return []pending{{
		change: objectstore.BucketChange{Setting: "public access block", Action: objectstore.ChangeUpdate, Detail: "-> all four blocks on"},
		apply: func(ctx context.Context) error {
			on := aws.Bool(true)
			_, err := s.client.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: &name,
				PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{BlockPublicAcls: on, BlockPublicPolicy: on, IgnorePublicAcls: on, RestrictPublicBuckets: on}})
			return s.bucketError(name, err)
		},
	}}, nil
}

// TLSOnlySid is the Sid of this extension's statement in the bucket policy: the only statement
// it writes; every other statement is somebody else's and is kept as it is.
const TLSOnlySid = "DenyInsecureTransport"

// tlsOnlyStatement denies every request not made over TLS, on the bucket and on every object in
// it.
func tlsOnlyStatement(bucket string) map[string]any {
	return map[string]any{
		"Sid":       TLSOnlySid,
		"Effect":    "Deny",
		"Principal": "*",
		"Action":    "s3:*",
		"Resource":  []string{"arn:aws:s3:::" + bucket, "arn:aws:s3:::" + bucket + "/*"},
		"Condition": map[string]any{"Bool": map[string]string{"aws:SecureTransport": "false"}},
	}
}

// TLSOnlyPolicy is the bucket policy of a bucket with no statement but this extension's.
func TLSOnlyPolicy(bucket string) string {
	out, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{tlsOnlyStatement(bucket)}})
	return string(out)
}

// planTLSPolicy merges this extension's statement into the bucket's policy: the statements of
// others (an operator's grant, provider-aws's own TLS statement with its s3:TlsVersion
// condition) are kept as they are, and a statement with TLSOnlySid is written only when it is
// missing or says something else. A policy that cannot be read is never written: writing it
// would replace what could not be kept.
func (s *management) planTLSPolicy(ctx context.Context, name string, _ *awsapi.BackupBucketConfig, _ *bool) ([]pending, error) {
	current := ""
	out, err := s.client.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name})
	switch {
	case err == nil:
		current = aws.ToString(out.Policy)
	case errorCode(err) != "NoSuchBucketPolicy":
		return nil, fmt.Errorf("reading the bucket policy of %q to merge the statement %s into it: %w", name, TLSOnlySid, s.bucketError(name, err))
	}
	merged, change, err := mergeTLSStatement(name, current)
	if err != nil || change == nil {
		return nil, err
	}
	return []pending{{change: *change, apply: func(ctx context.Context) error {
		_, err := s.client.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &name, Policy: aws.String(merged)})
		return s.bucketError(name, err)
	}}}, nil
}

// mergeTLSStatement returns the policy document current (empty: none) with this extension's
// statement in place of any statement with its Sid, every other statement and field kept, and
// the change that makes; a nil change when current holds the statement as wanted.
func mergeTLSStatement(bucket, current string) (string, *objectstore.BucketChange, error) {
	setting := "bucket policy statement " + TLSOnlySid
	if current == "" {
		return TLSOnlyPolicy(bucket), &objectstore.BucketChange{Setting: setting, Action: objectstore.ChangeCreate, Detail: "the bucket has no policy"}, nil
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(current), &doc); err != nil {
		return "", nil, fmt.Errorf("the policy of bucket %q does not parse, so %s cannot be merged into it (nothing was written): %w", bucket, TLSOnlySid, err)
	}
	var statements []any
	switch st := doc["Statement"].(type) {
	case []any:
		statements = st
	case map[string]any:
		statements = []any{st}
	}
	ourJSON, _ := json.Marshal(tlsOnlyStatement(bucket))
	var ours any
	_ = json.Unmarshal(ourJSON, &ours)
	var kept []any
	found, same := 0, false
	for _, st := range statements {
		if m, ok := st.(map[string]any); ok && m["Sid"] == TLSOnlySid {
			found++
			got, _ := json.Marshal(st)
			same = samePolicy(string(got), string(ourJSON))
			continue
		}
		kept = append(kept, st)
	}
	if found == 1 && same {
		return current, nil, nil
	}
	doc["Statement"] = append(kept, ours)
	if doc["Version"] == nil {
		doc["Version"] = "2012-10-17"
	}
	merged, err := json.Marshal(doc)
	if err != nil {
		return "", nil, err
	}
	change := &objectstore.BucketChange{Setting: setting, Action: objectstore.ChangeCreate, Detail: fmt.Sprintf("added beside the %d statements of others, which are kept", len(kept))}
	if found > 0 {
		change.Action, change.Detail = objectstore.ChangeUpdate, fmt.Sprintf("it says something else; the %d statements of others are kept", len(kept))
	}
	return string(merged), change, nil
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
