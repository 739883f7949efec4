// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// isCopy tells a copy of an object (objects.rewrite or objects.copy: b/<bucket>/o/<object>/
// rewriteTo|copyTo/b/<bucket>/o/<object>, the object names escaped) among the storage path's
// parts.
func isCopy(method string, parts []string) bool {
	return method == http.MethodPost && len(parts) == 9 && parts[0] == "b" && parts[2] == "o" &&
		(parts[4] == "rewriteTo" || parts[4] == "copyTo") && parts[5] == "b" && parts[7] == "o"
}

// checkDestinationGeneration plays the copy's ifGenerationMatch, which fake-gcs-server ignores on
// a copy (it honours it on uploads): as GCS documents it, the destination's live generation must
// match (0: no live generation), else 412 conditionNotMet. Checked before the copy is passed on,
// not atomically with it: a write in between is not seen (the stand-in's limit, not GCS's). It
// answers and returns false when the copy must not go on.
func (g *GCS) checkDestinationGeneration(w http.ResponseWriter, r *http.Request, bucket, object string) bool {
	want := r.URL.Query().Get("ifGenerationMatch")
	if want == "" {
		return true
	}
	gen, found, ok := g.liveGeneration(w, bucket, object, "destination")
	if !ok {
		return false
	}
	if !found {
		gen = "0"
	}
	return generationMatches(w, gen, want)
}

// checkSourceGeneration plays the copy's ifSourceGenerationMatch, which fake-gcs-server ignores
// (it honours sourceGeneration): as GCS documents it, the source object's current generation
// must match, else 412 conditionNotMet; a source without a live generation is 404. It answers
// and returns false when the copy must not go on.
func (g *GCS) checkSourceGeneration(w http.ResponseWriter, r *http.Request, bucket, object string) bool {
	want := r.URL.Query().Get("ifSourceGenerationMatch")
	if want == "" {
		return true
	}
	gen, found, ok := g.liveGeneration(w, bucket, object, "source")
	if !ok {
		return false
	}
	if !found {
		jsonError(w, http.StatusNotFound, "notFound", fmt.Sprintf("No such object: %s/%s", bucket, object))
		return false
	}
	return generationMatches(w, gen, want)
}

// liveGeneration reads the object's live generation from the backend (found false: it has none).
// A failed read is answered (ok false), naming which side (of the copy) was read.
func (g *GCS) liveGeneration(w http.ResponseWriter, bucket, object, side string) (gen string, found, ok bool) {
	resp, err := g.client.Get(g.backend.JoinPath("storage", "v1", "b", bucket, "o", object).String())
	if err != nil {
		jsonError(w, http.StatusBadGateway, "backendError", err.Error())
		return "", false, false
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", false, true
	}
	var o struct {
		Generation string `json:"generation"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&o) != nil {
		jsonError(w, http.StatusBadGateway, "backendError", "reading the "+side+"'s generation: "+resp.Status)
		return "", false, false
	}
	return o.Generation, true, true
}

// generationMatches answers 412 conditionNotMet where the generation is not the wanted one.
func generationMatches(w http.ResponseWriter, gen, want string) bool {
	if gen != want {
		jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")
		return false
	}
	return true
}
