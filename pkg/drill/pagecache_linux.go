// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropEvery is how many bytes of a large file the drill writes before it has them written to
// disk and dropped from the page cache.
const dropEvery = 32 << 20

// dropBehind writes to f and keeps its page cache small: every dropEvery bytes it starts writing
// them to disk, and drops the previous dropEvery bytes (written by then) from the page cache. The
// container's memory limit counts the page cache (a cgroup's memory includes it): a full
// snapshot written whole would take as much of it as its size.
type dropBehind struct {
	f                *os.File
	off, prev, start int64 // written; [prev, start) being written back; [start, off) dirty
}

func newDropBehind(f *os.File) *dropBehind { return &dropBehind{f: f} }

func (d *dropBehind) Write(p []byte) (int, error) {
	n, err := d.f.Write(p)
	d.off += int64(n)
	if d.off-d.start >= dropEvery {
		fd := int(d.f.Fd())
		// Errors here cost memory, not correctness: the data is written either way.
		if d.start > d.prev {
			_ = unix.SyncFileRange(fd, d.prev, d.start-d.prev, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
			_ = unix.Fadvise(fd, d.prev, d.start-d.prev, unix.FADV_DONTNEED)
		}
		_ = unix.SyncFileRange(fd, d.start, d.off-d.start, unix.SYNC_FILE_RANGE_WRITE)
		d.prev, d.start = d.start, d.off
	}
	return n, err
}

// dropCache writes the file at path to disk and drops it from the page cache (etcd's restored
// database, before the embedded etcd maps it: what it then reads is clean and reclaimable).
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
