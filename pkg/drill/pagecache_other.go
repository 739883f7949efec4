// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package drill

import (
	"io"
	"os"
)

// newDropBehind is f itself: the page cache is left to the system.
func newDropBehind(f *os.File) io.Writer { return f }

// dropCache does nothing here.
func dropCache(string) error { return nil }
