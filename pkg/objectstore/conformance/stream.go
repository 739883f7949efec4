// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// testStreamWrite: a store whose Writer is an objectstore.StreamWriter writes exactly the size it
// is told, reads back what was streamed, and refuses a stream shorter or longer than that size
// or one that fails, leaving no object: also one that fails only when read past its size (a
// copy's refusal to commit, replication.ErrCommitRefused, comes so). Whether a Writer streams is its type's word (no hook to
// forget): a Writer without PutObjectStream skips the case, saying so.
func testStreamWrite(t *testing.T, h Harness) {
	w, ok := h.Store.Writer.(objectstore.StreamWriter)
	if !ok {
		t.Skipf("the store's Writer (%T) has no PutObjectStream", h.Store.Writer)
	}
	ctx := ctxFor(t)
	name := newBucket(t, h)
	for _, data := range []string{"", "hello"} {
		key := "stream/" + data + "x"
		if err := w.PutObjectStream(ctx, name, key, strings.NewReader(data), int64(len(data))); err != nil {
			t.Fatalf("PutObjectStream of %d bytes: %v", len(data), err)
		}
		got, err := objectstore.ReadObject(ctx, h.Store, name, key)
		if err != nil || !bytes.Equal(got, []byte(data)) {
			t.Errorf("read back %q, %v; want %q", got, err, data)
		}
	}
	for _, c := range []struct {
		name string
		r    io.Reader
		size int64
	}{
		{"shorter than its size", strings.NewReader("hello"), 6},
		{"longer than its size", strings.NewReader("hello"), 4},
		{"failing", io.MultiReader(bytes.NewReader(failingBody), failingReader{}), int64(len(failingBody)) + 5},
		{"failing at its end", io.MultiReader(bytes.NewReader(failingBody), failingReader{}), int64(len(failingBody))},
	} {
		if err := w.PutObjectStream(ctx, name, "stream/bad", c.r, c.size); err == nil {
			t.Errorf("a stream %s was written", c.name)
		}
	}
	if _, err := h.Store.OpenObject(ctx, name, "stream/bad", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused stream left an object: %v", err)
	}
}

// failingBody is what a failing stream holds before it fails: enough that the store's request
// is under way when it does (a few bytes stay in a client's buffer, never sent), and less than
// a resumable upload's chunk in the gcs test (one request whose body is the stream), where a
// failure ending the body normally stored the object.
var failingBody = bytes.Repeat([]byte("x"), 200<<10)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
