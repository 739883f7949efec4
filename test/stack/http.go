// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"encoding/json"
	"net/http"
)

// WriteJSON answers v as JSON with status; a map's "etag" string is also the ETag header, as the
// ARM and Google APIs the stand-ins play return it in both places.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if m, ok := v.(map[string]any); ok {
		if etag, ok := m["etag"].(string); ok {
			w.Header().Set("ETag", etag)
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// StatusRecorder remembers the status of a proxied response.
type StatusRecorder struct {
	http.ResponseWriter

	Status int
}

// WriteHeader records the status and writes it.
func (s *StatusRecorder) WriteHeader(code int) {
	s.Status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *StatusRecorder) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
