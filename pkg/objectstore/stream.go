// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"errors"
	"fmt"
	"io"
)

// ExactStream is r as a StreamWriter reads it for key: exactly size bytes, then io.EOF. A
// stream that ends before size bytes, holds more than size bytes or fails is an error (never
// io.EOF), so that a writer copying from it until io.EOF fails rather than store a short or
// truncated object.
func ExactStream(r io.Reader, key string, size int64) io.Reader {
	return &exactStream{r: r, key: key, size: size}
}

type exactStream struct {
	r          io.Reader
	key        string
	size, read int64
	err        error
}

func (e *exactStream) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if e.read == e.size {
		var one [1]byte
		n, err := io.ReadFull(e.r, one[:])
		switch {
		case n > 0:
			e.err = fmt.Errorf("object %s: the stream holds more than %d bytes", e.key, e.size)
		case errors.Is(err, io.EOF):
			e.err = io.EOF
		default:
			e.err = fmt.Errorf("object %s: reading the stream's end: %w", e.key, err)
		}
		return 0, e.err
	}
	if rest := e.size - e.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := e.r.Read(p)
	e.read += int64(n)
	switch {
	case errors.Is(err, io.EOF) && e.read < e.size:
		e.err = fmt.Errorf("object %s: the stream ended after %d of %d bytes", e.key, e.read, e.size)
	case errors.Is(err, io.EOF):
		return n, nil // the end is checked on the next read
	case err != nil:
		e.err = fmt.Errorf("object %s: reading the stream at byte %d: %w", e.key, e.read, err)
	}
	return n, e.err
}
