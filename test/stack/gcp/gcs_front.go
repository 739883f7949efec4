// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The front's request handling: authentication, the token endpoint, and the bucket and object
// operations fake-gcs-server does not implement as GCS does.

func jsonError(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": message, "errors": []map[string]string{{"reason": reason, "message": message, "domain": "global"}},
	}})
}

func (g *GCS) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		g.serveToken(w, r)
		return
	}
	identity, ok := g.identity(r.Header.Get("Authorization"))
	if !ok {
		jsonError(w, http.StatusUnauthorized, "authError", "Invalid Credentials")
		return
	}
	r.Header.Set(originHeader, origin(r))
	var body []byte
	if !strings.HasPrefix(r.URL.Path, "/upload/") && r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err := g.authorize(identity, r, body); err != nil {
		jsonError(w, http.StatusForbidden, "forbidden", err.Error())
		return
	}
	g.mu.Lock()
	refused := g.refuseOnce == [2]string{r.Method, r.URL.Path}
	if refused {
		g.refuseOnce = [2]string{}
	}
	g.mu.Unlock()
	if refused {
		gcpIAMError(w, http.StatusForbidden, "PERMISSION_DENIED", "refused once by the test ("+r.Method+" "+r.URL.Path+")")
		return
	}
	if g.opts.Delay > 0 {
		time.Sleep(g.opts.Delay)
	}
	if !g.opts.Unrecorded {
		g.mu.Lock()
		g.requests = append(g.requests, GCSRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body})
		g.mu.Unlock()
	}

	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/storage/v1/"), "/")
	isStorage := strings.HasPrefix(r.URL.Path, "/storage/v1/")
	isListing := isStorage && r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "b" && parts[2] == "o"
	if isListing && r.URL.Query().Get("delimiter") != "" {
		// GCS returns at most 1,000 objects a page whatever the client asks; fake-gcs-server
		// returns everything when maxResults is absent.
		q := r.URL.Query()
		if n, err := strconv.Atoi(q.Get("maxResults")); err != nil || n <= 0 || n > 1000 {
			q.Set("maxResults", "1000")
			r.URL.RawQuery = q.Encode()
		}
	}
	switch {
	case isListing && r.URL.Query().Get("delimiter") == "":
		g.listObjects(w, r, unescape(parts[1]))
	case strings.HasPrefix(r.URL.Path, "/v1/projects/") && strings.Contains(r.URL.Path, "/quotaInfos/"):
		g.serveQuotaInfo(w, r)
	case strings.HasPrefix(r.URL.Path, "/v1/projects/"):
		g.serveIAM(w, r, body)
	case isStorage && len(parts) >= 3 && parts[0] == "b" && parts[2] == "managedFolders":
		g.serveManagedFolders(w, r, unescape(parts[1]), parts[3:], body)
	case isStorage && len(parts) == 3 && parts[0] == "b" && parts[2] == "iam":
		g.serveBucketPolicy(w, r, unescape(parts[1]), body)
	case isStorage && r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "b":
		g.createBucket(w, r, body)
	case isStorage && len(parts) == 2 && parts[0] == "b" && r.Method == http.MethodPatch:
		g.patchBucket(w, r, unescape(parts[1]), body)
	case isStorage && len(parts) == 3 && parts[0] == "b" && parts[2] == "lockRetentionPolicy":
		g.lockRetention(w, r, unescape(parts[1]))
	case isStorage && isCopy(r.Method, parts):
		if g.checkSourceGeneration(w, r, unescape(parts[1]), unescape(parts[3])) && g.checkDestinationGeneration(w, r, unescape(parts[6]), unescape(parts[8])) {
			g.proxy.ServeHTTP(w, r)
		}
	case isStorage && len(parts) >= 4 && parts[0] == "b" && parts[2] == "o" && r.Method == http.MethodDelete:
		g.deleteObject(w, r, unescape(parts[1]), unescape(strings.Join(parts[3:], "/")))
	default:
		g.proxy.ServeHTTP(w, r)
	}
}

func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// identity accepts tokens the front issued, and self-signed JWTs of registered keys, and
// returns whose they are.
func (g *GCS) identity(header string) (string, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return "", false
	}
	g.mu.Lock()
	who, issued := g.accessTokens[token]
	g.mu.Unlock()
	if issued {
		return who, true
	}
	who, err := g.verifyJWT(token)
	return who, err == nil
}

// verifyJWT checks a JWT signed with a registered key (named by its "kid") of the service
// account it claims to be from, and returns that service account.
func (g *GCS) verifyJWT(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("not a JWT")
	}
	var header struct {
		Kid string `json:"kid"`
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	for i, v := range []any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return "", err
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	key, ok := g.keys[header.Kid]
	g.mu.Unlock()
	if !ok || key.email != claims.Iss {
		return "", fmt.Errorf("unknown key %q of service account %q", header.Kid, claims.Iss)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return claims.Iss, rsa.VerifyPKCS1v15(key.pub, crypto.SHA256, sum[:], sig)
}

func (g *GCS) serveToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	var (
		err error
		who string
	)
	switch r.PostForm.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		who, err = g.verifyJWT(r.PostForm.Get("assertion"))
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		g.mu.Lock()
		if !g.subjectTokens[r.PostForm.Get("subject_token")] {
			err = fmt.Errorf("unknown subject token")
		}
		g.mu.Unlock()
	default:
		err = fmt.Errorf("unsupported grant type")
	}
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": err.Error()})
		return
	}
	g.mu.Lock()
	g.issued++
	token := fmt.Sprintf("ya29.front-%d-%d", g.issued, time.Now().UnixNano())
	g.accessTokens[token] = who
	g.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
}

func (g *GCS) deleteObject(w http.ResponseWriter, r *http.Request, bucket, object string) {
	if n, every := g.deletes.Add(1), g.throttleEvery.Load(); every > 0 && n%every == 0 {
		g.Throttled.Add(1)
		jsonError(w, http.StatusTooManyRequests, "rateLimitExceeded", "The object exceeded the rate limit for object mutation operations (create, update, and delete).")
		return
	}
	g.mu.Lock()
	var period int64
	if b := g.buckets[bucket]; b != nil {
		period = retentionSeconds(b.fields["retentionPolicy"])
	}
	g.mu.Unlock()
	if period > 0 {
		if created, ok := g.objectCreated(bucket, object, r.URL.Query().Get("generation")); ok && time.Since(created) < time.Duration(period)*time.Second {
			jsonError(w, http.StatusForbidden, "retentionPolicyNotMet", fmt.Sprintf("Object '%s/%s' is subject to bucket's retention policy or object retention and cannot be deleted or overwritten", bucket, object))
			return
		}
	}
	g.proxy.ServeHTTP(w, r)
}

func (g *GCS) objectCreated(bucket, object, generation string) (time.Time, bool) {
	u := g.backend.JoinPath("storage", "v1", "b", bucket, "o", object)
	if generation != "" {
		u.RawQuery = "generation=" + generation
	}
	resp, err := g.client.Get(u.String())
	if err != nil {
		return time.Time{}, false
	}
	defer resp.Body.Close()
	var o struct {
		TimeCreated time.Time `json:"timeCreated"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&o) != nil {
		return time.Time{}, false
	}
	return o.TimeCreated, true
}

// rewriteResponse puts the kept settings into bucket resources and the retention expiry into
// object resources that fake-gcs-server returns.
func (g *GCS) rewriteResponse(resp *http.Response) error {
	if strings.HasPrefix(resp.Request.URL.Path, "/upload/") {
		g.recordUpload(resp)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.Path, "/storage/v1/b/") || resp.Request.URL.Query().Get("alt") == "media" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(resp.Request.URL.Path, "/storage/v1/b/"), "/")
	isBucket := len(parts) == 1 || (len(parts) == 2 && parts[1] == "lockRetentionPolicy")
	isObject := len(parts) >= 3 && parts[1] == "o" && resp.Request.Method == http.MethodGet
	if !isBucket && !isObject {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil {
		var name string
		if isBucket {
			_ = json.Unmarshal(doc["name"], &name)
		} else {
			_ = json.Unmarshal(doc["bucket"], &name)
		}
		g.mu.Lock()
		if b := g.buckets[name]; b != nil {
			if isBucket {
				for _, f := range overlayFields {
					delete(doc, f)
					if v, ok := b.fields[f]; ok {
						doc[f] = v
					}
				}
				if rp, ok := b.fields["retentionPolicy"]; ok {
					doc["retentionPolicy"], _ = json.Marshal(map[string]any{"retentionPeriod": strconv.FormatInt(retentionSeconds(rp), 10), "isLocked": b.locked,
						"effectiveTime": b.created.UTC().Format(time.RFC3339)})
				}
				doc["metageneration"], _ = json.Marshal(strconv.FormatInt(b.metageneration, 10))
			} else if period := retentionSeconds(b.fields["retentionPolicy"]); period > 0 {
				var created time.Time
				_ = json.Unmarshal(doc["timeCreated"], &created)
				doc["retentionExpirationTime"], _ = json.Marshal(created.Add(time.Duration(period) * time.Second).UTC().Format(time.RFC3339Nano))
			}
		}
		g.mu.Unlock()
		body, _ = json.Marshal(doc)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
	return nil
}
