// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// iamIssuer issues bucket-scoped credentials that are access keys of one IAM user per bucket, whose only policy allows what etcd-backup-restore and the entry controller do in that
// bucket. IAM allows two access keys per user: the published one and, during the grace period,
// the previous one.
type iamIssuer struct {
	iam      *iam.Client
	sts      *sts.Client // for Location: the account the operator's credentials are of
	template map[string][]byte
}

var _ objectstore.CredentialIssuer = (*iamIssuer)(nil)

// IAMUserName is the IAM user of a bucket.
func IAMUserName(bucket string) string { return "gardener-backup-" + bucket }

const iamPolicyName = "etcd-backup-bucket"

// The tag that marks an IAM user as this extension's.
const (
	managedByTag   = "managed-by"
	managedByValue = "gardener-extension-backup"
)

// owned says whether the IAM user exists and carries this extension's tag.
func (s *iamIssuer) owned(ctx context.Context, user string) (bool, error) {
	out, err := s.iam.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: aws.String(user)})
	if err != nil {
		if err = iamError("reading the tags of IAM user "+user, err); errors.Is(err, objectstore.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	for _, t := range out.Tags {
		if aws.ToString(t.Key) == managedByTag && aws.ToString(t.Value) == managedByValue {
			return true, nil
		}
	}
	return false, nil
}

// IssueCredential implements objectstore.CredentialIssuer.
func (s *iamIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	user := IAMUserName(bucket)
	_, err := s.iam.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String(user), Tags: []iamtypes.Tag{{Key: aws.String(managedByTag), Value: aws.String(managedByValue)}}})
	var exists *iamtypes.EntityAlreadyExistsException
	if err != nil && !errors.As(err, &exists) {
		return objectstore.Credential{}, iamError("creating IAM user "+user, err)
	}
	if err != nil { // the user was there: it must be one this extension made
		if ours, err := s.owned(ctx, user); err != nil || !ours {
			if err == nil {
				err = fmt.Errorf("%w: IAM user %s is not tagged %s=%s: not taken over", objectstore.ErrOwnedByOther, user, managedByTag, managedByValue)
			}
			return objectstore.Credential{}, err
		}
	}
	policy, err := bucketPolicy(bucket)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if _, err := s.iam.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String(user), PolicyName: aws.String(iamPolicyName), PolicyDocument: aws.String(string(policy))}); err != nil {
		return objectstore.Credential{}, iamError("setting the policy of IAM user "+user, err)
	}
	// A key created by a pass that failed before publishing it goes first: a user has room for
	// two keys, the published one and the new one.
	if _, err := s.deleteKeys(ctx, user, inUse); err != nil {
		return objectstore.Credential{}, err
	}
	key, err := s.iam.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String(user)})
	if err != nil {
		return objectstore.Credential{}, iamError("creating an access key for IAM user "+user, err)
	}
	data := maps.Clone(s.template)
	data[KeyAccessKeyID], data[KeySecretAccessKey] = []byte(aws.ToString(key.AccessKey.AccessKeyId)), []byte(aws.ToString(key.AccessKey.SecretAccessKey))
	return objectstore.Credential{ID: aws.ToString(key.AccessKey.AccessKeyId), Data: data}, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer: the user's access keys not kept
// are deleted; with nothing kept, the user and its policy too.
func (s *iamIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	user := IAMUserName(bucket)
	if ours, err := s.owned(ctx, user); err != nil || !ours {
		return err // a missing user, or somebody else's: nothing of ours to revoke
	}
	exists, err := s.deleteKeys(ctx, user, keep)
	if err != nil || !exists || len(keep) > 0 {
		return err
	}
	if _, err := s.iam.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: aws.String(user), PolicyName: aws.String(iamPolicyName)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting the policy of IAM user "+user, err)
	}
	if _, err := s.iam.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String(user)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting IAM user "+user, err)
	}
	return nil
}

// deleteKeys deletes the user's access keys not kept; exists is false when there is no user.
func (s *iamIssuer) deleteKeys(ctx context.Context, user string, keep []string) (exists bool, err error) {
	keys, err := s.iam.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	if errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, iamError("listing the access keys of IAM user "+user, err)
	}
	for _, k := range keys.AccessKeyMetadata {
		if slices.Contains(keep, aws.ToString(k.AccessKeyId)) {
			continue
		}
		if _, err := s.iam.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(user), AccessKeyId: k.AccessKeyId}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
			return true, iamError("deleting an access key of IAM user "+user, err)
		}
	}
	return true, nil
}

// newIAMIssuer builds the IAM client from the operator's credentials (IAM is global: its
// endpoint is us-east-1's unless the provider's IAMEndpoint points elsewhere).
func (p *Provider) newIAMIssuer(creds map[string][]byte, cfg aws.Config) *iamIssuer {
	client := iam.NewFromConfig(cfg, func(o *iam.Options) {
		o.Region = "us-east-1"
		if p.IAMEndpoint != "" {
			o.BaseEndpoint = aws.String(p.IAMEndpoint)
		}
	})
	stsClient := sts.NewFromConfig(cfg, func(o *sts.Options) {
		if p.STSEndpoint != "" {
			o.BaseEndpoint = aws.String(p.STSEndpoint)
		}
	})
	return &iamIssuer{iam: client, sts: stsClient, template: credentialTemplate(creds)}
}
