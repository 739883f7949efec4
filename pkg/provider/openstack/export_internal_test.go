// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

// SetStreamLimits lowers the segment size of a streamed write and the largest server-side copy
// for a test (static large objects and the streamed copy of small objects) and returns what puts
// them back.
func SetStreamLimits(segment, copySingle int64) (restore func()) {
	oldSegment, oldCopy := streamSegmentSize, copySingleLimit
	streamSegmentSize, copySingleLimit = segment, copySingle
	return func() { streamSegmentSize, copySingleLimit = oldSegment, oldCopy }
}
