// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) of the GCS provider.
const Type = "gcp"

// API is the SDK-free half of the GCS provider: what the admission webhook checks without
// linking the cloud SDK (GCS's bucket naming rules: ValidateBucketName).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName, IncumbentFields...)

// IncumbentFields are the fields of the incumbent's own BackupBucketConfig
// (gardener-extension-provider-gcp v1.53.4 pkg/apis/gcp/v1alpha1/types_backupbucket.go:15-24): they
// stay in the Seed's providerConfig and are refused in the seed configuration.
var IncumbentFields = []string{"immutability", "store"}
