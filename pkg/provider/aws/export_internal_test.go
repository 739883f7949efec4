// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

// SetCopyLimits lowers S3's copy limits for a test (the multipart copy of small objects) and
// returns what puts them back.
func SetCopyLimits(single, part int64) (restore func()) {
	oldSingle, oldPart := copySingleLimit, copyPartSize
	copySingleLimit, copyPartSize = single, part
	return func() { copySingleLimit, copyPartSize = oldSingle, oldPart }
}
