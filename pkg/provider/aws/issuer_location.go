// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Location implements objectstore.CredentialIssuer: the AWS account of the operator's
// credentials (STS GetCallerIdentity), where the bucket's IAM user and its keys live.
func (s *iamIssuer) Location(ctx context.Context) (string, error) {
	out, err := s.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", iamError("reading the account of the operator's credentials (sts:GetCallerIdentity)", err)
	}
	return "aws-account:" + aws.ToString(out.Account), nil
}

// Location implements objectstore.CredentialIssuer: the MinIO server the operator's secret
// names, where the users it issued live.
func (m *minioIssuer) Location(context.Context) (string, error) {
	return "minio:" + m.server, nil
}
