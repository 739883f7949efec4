// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type the Azure provider serves.
const Type = "azure"

// API is the SDK-free half of the Azure provider: the admission webhook and the core use it
// without linking the Azure SDK (Azure's container naming rules: ValidateBucketName).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName, IncumbentFields...)

// IncumbentFields are the fields of the incumbent's own BackupBucketConfig
// (gardener-extension-provider-azure v1.62.1 pkg/apis/azure/v1alpha1/types_backup.go:23-34): they
// stay in the Seed's providerConfig and are refused in the seed configuration.
var IncumbentFields = []string{"cloudConfiguration", "immutability", "rotationConfig"}
