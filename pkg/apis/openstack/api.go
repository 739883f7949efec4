// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type the OpenStack provider serves.
const Type = "openstack"

// API is the provider's SDK-free half: what the admission webhook and the core check and decode
// without any cloud call (Swift's container naming rules: ValidateBucketName). It has no
// incumbent fields: gardener-extension-provider-openstack v1.57.0 serves no BackupBucketConfig
// (its pkg/apis/openstack/v1alpha1 has none) and its controllers never read a BackupBucket's
// providerConfig.
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
