// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) the local provider serves: the type of Gardener's own
// local development setup (provider-local).
const Type = "local"

// API is the SDK-free half of the local provider: what the admission webhook and the core check
// and decode before the filesystem is touched (directory naming rules: ValidateBucketName).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
