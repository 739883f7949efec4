// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestExactStream(t *testing.T) {
	for _, c := range []struct {
		name string
		r    io.Reader
		size int64
		ok   bool
	}{
		{"exact", strings.NewReader("hello"), 5, true},
		{"exact, one byte a read", iotest.OneByteReader(strings.NewReader("hello")), 5, true},
		{"exact, EOF with the data", iotest.DataErrReader(strings.NewReader("hello")), 5, true},
		{"empty", strings.NewReader(""), 0, true},
		{"shorter", strings.NewReader("hello"), 6, false},
		{"longer", strings.NewReader("hello"), 4, false},
		{"longer than empty", strings.NewReader("h"), 0, false},
		{"failing", io.MultiReader(strings.NewReader("he"), iotest.ErrReader(errors.New("reset"))), 5, false},
	} {
		got, err := io.ReadAll(objectstore.ExactStream(c.r, "k", c.size))
		if c.ok && (err != nil || int64(len(got)) != c.size) {
			t.Errorf("%s: read %d bytes, %v; want %d", c.name, len(got), err, c.size)
		}
		if !c.ok && err == nil {
			t.Errorf("%s: read %d bytes without an error", c.name, len(got))
		}
	}
}
