// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

// SetBlockSizes lowers the block sizes of a streamed write and of a server-side copy for a test
// (several blocks of small objects) and returns what puts them back.
func SetBlockSizes(stream, copied int64) (restore func()) {
	oldStream, oldCopy := streamBlockSize, copyBlockSize
	streamBlockSize, copyBlockSize = stream, copied
	return func() { streamBlockSize, copyBlockSize = oldStream, oldCopy }
}
