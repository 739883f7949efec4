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
	resp, err := g.client.Get(g.backend.JoinPath("storage", "v1", "b", bucket, "o", object).String())
	if err != nil {
		jsonError(w, http.StatusBadGateway, "backendError", err.Error())
		return false
	}
	defer resp.Body.Close()
	var o struct {
		Generation string `json:"generation"`
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		o.Generation = "0"
	case resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&o) != nil:
		jsonError(w, http.StatusBadGateway, "backendError", "reading the destination's generation: "+resp.Status)
		return false
	}
	if o.Generation != want {
		jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")
		return false
	}
	return true
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
	resp, err := g.client.Get(g.backend.JoinPath("storage", "v1", "b", bucket, "o", object).String())
	if err != nil {
		jsonError(w, http.StatusBadGateway, "backendError", err.Error())
		return false
	}
	defer resp.Body.Close()
	var o struct {
		Generation string `json:"generation"`
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		jsonError(w, http.StatusNotFound, "notFound", fmt.Sprintf("No such object: %s/%s", bucket, object))
		return false
	case resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&o) != nil:
		jsonError(w, http.StatusBadGateway, "backendError", "reading the source's generation: "+resp.Status)
		return false
	case o.Generation != want:
		jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")
		return false
	}
	return true
}
