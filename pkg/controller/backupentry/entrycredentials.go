// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"

// The entry credential's condition, reasons and rotation request, as package entrycredentials
// names them (what the BackupEntry controller's users read).
const (
	ConditionEntryCredentials     = entrycredentials.ConditionEntryCredentials
	ReasonOwnPrefix               = entrycredentials.ReasonOwnPrefix
	ReasonBucketWide              = entrycredentials.ReasonBucketWide
	ReasonNotIssued               = entrycredentials.ReasonNotIssued
	ReasonBucketWideAtQuota       = entrycredentials.ReasonBucketWideAtQuota
	ReasonEntryCredentialRotated  = entrycredentials.ReasonEntryCredentialRotated
	ReasonEntryCredentialFallback = entrycredentials.ReasonEntryCredentialFallback
	AnnotationRotateCredentials   = entrycredentials.AnnotationRotateCredentials
)
