// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) the AWS provider serves.
const Type = "aws"

// API is the SDK-free half of the AWS provider: what the admission webhook checks and the core
// decodes before any S3 call (S3's naming rules: ValidateBucketName).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName, IncumbentFields...)

// IncumbentFields are the fields of the incumbent's own BackupBucketConfig
// (gardener-extension-provider-aws v1.73.0 pkg/apis/aws/v1alpha1/types_backupbucket.go:30-36): they
// stay in the Seed's providerConfig and are refused in the seed configuration.
var IncumbentFields = []string{"immutability"}
