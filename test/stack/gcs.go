package stack

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GCS is fake-gcs-server (a real process, the data plane: buckets, objects, listings, deletes)
// behind a front on loopback that plays what fake-gcs-server does not do, the way GCS does it:
//   - OAuth: a token endpoint for service-account keys (JWT bearer grant, signature checked) and
//     workload identity (STS token exchange), and every storage request must carry an issued
//     token (401 otherwise);
//   - the bucket settings fake-gcs-server drops silently (location, uniform bucket-level
//     access, public access prevention, lifecycle, retention policy and its lock, soft delete,
//     labels) are kept per bucket, returned on reads, guarded by metageneration preconditions,
//     and a locked retention policy refuses removal or shortening;
//   - a bucket retention policy is enforced on object deletes (403 retentionPolicyNotMet) and
//     reported on object reads (retentionExpirationTime);
//   - object versioning is kept across bucket updates (fake-gcs-server switches it off on every
//     update that does not name it);
//   - listings return at most 1,000 objects a page and are paged by name and generation, as GCS
//     pages them (fake-gcs-server pages by name alone, so a page boundary among the generations
//     of one name repeats the page forever);
//   - lifecycle rules are kept (at most 100, as GCS allows) and can be run (RunLifecycle, see
//     gcs_lifecycle.go) the way GCS runs them;
//   - bucket names under a prefix belong to "another project" (create answers 409);
//   - optional added delay per request and 429 throttling of every n-th object delete;
//   - IAM (gcpiam.go): service accounts and their keys (the IAM API's REST subset the extension
//     uses), bucket IAM policies, and their enforcement: a service account created through the
//     IAM API reaches only buckets whose policy binds it, while the keys ServiceAccountKey hands
//     out and workload identity act as the project's owner.
//
// Every request is recorded, so tests assert on what the client asked as well as on the state.
type GCS struct {
	// URL is the front's base URL; Endpoint the storage JSON API endpoint under it.
	URL, Endpoint string
	// TokenURL is the token endpoint (service-account keys' token_uri, workload identity STS).
	TokenURL string
	// ProjectID is the project of the credentials the front issues.
	ProjectID string

	opts    GCSOptions
	backend *url.URL
	cmd     *exec.Cmd
	root    string
	server  *http.Server
	proxy   *httputil.ReverseProxy
	client  *http.Client

	deletes       atomic.Int64
	throttleEvery atomic.Int64
	Throttled     atomic.Int64

	mu              sync.Mutex
	buckets         map[string]*bucketState
	requests        []GCSRequest
	keys            map[string]saKey // by key ID
	serviceAccounts map[string]*serviceAccount
	subjectTokens   map[string]bool
	accessTokens    map[string]string // token -> identity (email; "" for workload identity)
	issued          int
}

// saKey is a service-account key the token endpoint accepts.
type saKey struct {
	email string
	pub   *rsa.PublicKey
}

// GCSOptions configure StartGCS.
type GCSOptions struct {
	// ForeignPrefix makes bucket names with this prefix "owned by another project".
	ForeignPrefix string
	// Delay is added to every storage request (a network round trip).
	Delay time.Duration
	// ThrottleEvery answers every n-th object delete with 429 rateLimitExceeded (0: never).
	ThrottleEvery int
	// Unrecorded keeps no request log (benchmarks: the log grows with every request and lives
	// in the benchmark's own heap).
	Unrecorded bool
	// Filesystem keeps fake-gcs-server's objects in files on tmpfs instead of its memory backend,
	// whose every object request scans (and for a generation, copies) the bucket's whole object
	// list: with it, requests on a bucket of 100,000 objects cost milliseconds each. The
	// filesystem backend has no versioning.
	Filesystem bool
}

// GCSRequest is one recorded storage request.
type GCSRequest struct {
	Method, Path string
	Query        url.Values
	Body         []byte
}

// bucketState is what the front keeps of a bucket beyond fake-gcs-server.
type bucketState struct {
	created        time.Time
	fields         map[string]json.RawMessage
	metageneration int64
	locked         bool
	iam            *bucketPolicy
	// dropLifecycle is how many of the next lifecycle updates are answered as done but not kept
	// (what fake-gcs-server does with every one): a test of read-back.
	dropLifecycle int
}

// overlayFields are the bucket fields the front keeps.
var overlayFields = []string{"location", "iamConfiguration", "lifecycle", "retentionPolicy", "softDeletePolicy", "labels", "versioning"}

// maxLifecycleRules is how many lifecycle rules GCS accepts on one bucket.
const maxLifecycleRules = 100

// StartGCS starts fake-gcs-server (built once by hack/tools.sh) and the front.
func StartGCS(opts GCSOptions) (*GCS, error) {
	bin, err := Tool("fakegcs", "FAKE_GCS_SERVER")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	backendURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	args := []string{"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port), "-backend", "memory",
		"-external-url", backendURL, "-public-host", fmt.Sprintf("127.0.0.1:%d", port), "-log-level", "error"}
	var root string
	if opts.Filesystem {
		if root, err = os.MkdirTemp(tmpfs(), "fake-gcs-"); err != nil {
			return nil, err
		}
		args[7] = "filesystem"
		args = append(args, "-filesystem-root", root)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting fake-gcs-server: %w", err)
	}
	g := &GCS{
		ProjectID:       "geb-test-project",
		opts:            opts,
		cmd:             cmd,
		root:            root,
		client:          &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}},
		buckets:         map[string]*bucketState{},
		keys:            map[string]saKey{},
		serviceAccounts: map[string]*serviceAccount{},
		subjectTokens:   map[string]bool{},
		accessTokens:    map[string]string{},
	}
	g.backend, _ = url.Parse(backendURL)
	g.throttleEvery.Store(int64(opts.ThrottleEvery))
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(backendURL + "/_internal/healthcheck")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			g.Stop()
			return nil, fmt.Errorf("fake-gcs-server did not become healthy on %s", backendURL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.Stop()
		return nil, err
	}
	g.URL = "http://" + l.Addr().String()
	g.Endpoint = g.URL + "/storage/v1/"
	g.TokenURL = g.URL + "/token"
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(g.backend)
			r.Out.Host = g.backend.Host
			r.Out.Header.Del("Authorization")
			r.Out.Header.Del("Accept-Encoding") // responses are rewritten: keep them plain
		},
		Transport:      g.client.Transport,
		ModifyResponse: g.rewriteResponse,
		// Clients that give up (deadlines, cancelled reconciles) are normal here.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	g.server = &http.Server{Handler: http.HandlerFunc(g.serve)}
	go func() { _ = g.server.Serve(l) }()
	return g, nil
}

// Stop stops the front and fake-gcs-server.
func (g *GCS) Stop() {
	if g.server != nil {
		_ = g.server.Close()
	}
	if g.cmd != nil && g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}
	if g.root != "" {
		_ = os.RemoveAll(g.root)
	}
}

// ServiceAccountKey returns a new service-account key file (JSON) whose token_uri is the
// front's: the client signs a JWT with the key and the front checks the signature.
func (g *GCS) ServiceAccountKey(email string) []byte {
	return g.newKey(email, "k-"+email)
}

// newKey registers a new key of email under keyID and returns its key file.
func (g *GCS) newKey(email, keyID string) []byte {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	g.mu.Lock()
	g.keys[keyID] = saKey{email: email, pub: &key.PublicKey}
	g.mu.Unlock()
	out, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     g.ProjectID,
		"private_key_id": keyID,
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      "1",
		"token_uri":      g.TokenURL,
	})
	return out
}

// SetThrottleEvery changes GCSOptions.ThrottleEvery.
func (g *GCS) SetThrottleEvery(n int) { g.throttleEvery.Store(int64(n)) }

// RevokeServiceAccountKey makes the token endpoint refuse the keys of email from now on.
func (g *GCS) RevokeServiceAccountKey(email string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, k := range g.keys {
		if k.email == email {
			delete(g.keys, id)
		}
	}
}

// SecretData is a BackupBucket secret with a fresh service-account key and the endpoint.
func (g *GCS) SecretData() map[string][]byte {
	return map[string][]byte{
		"serviceaccount.json": g.ServiceAccountKey(fmt.Sprintf("backup-%d@%s.iam.gserviceaccount.com", time.Now().UnixNano(), g.ProjectID)),
		"storageAPIEndpoint":  []byte(g.Endpoint),
	}
}

// WorkloadIdentityConfig registers token as a valid subject token of the STS exchange and
// returns the "config" key of a workload identity secret pointing at the front.
func (g *GCS) WorkloadIdentityConfig(token string) []byte {
	g.mu.Lock()
	g.subjectTokens[token] = true
	g.mu.Unlock()
	cc, _ := json.Marshal(map[string]any{
		"type":               "external_account",
		"audience":           "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/gardener/providers/seed",
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          g.TokenURL,
		"credential_source":  map[string]any{"file": "/ignored/by/the/extension"},
	})
	out, _ := json.Marshal(map[string]any{
		"apiVersion":        "gcp.provider.extensions.gardener.cloud/v1alpha1",
		"kind":              "WorkloadIdentityConfig",
		"projectID":         g.ProjectID,
		"credentialsConfig": json.RawMessage(cc),
	})
	return out
}

// Requests returns the recorded requests whose path contains substr.
func (g *GCS) Requests(substr string) []GCSRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []GCSRequest
	for _, r := range g.requests {
		if strings.Contains(r.Path, substr) {
			out = append(out, r)
		}
	}
	return out
}

// BucketField returns a kept bucket field as JSON (nil if unset), and whether the retention
// policy is locked.
func (g *GCS) BucketField(bucket, field string) (json.RawMessage, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[bucket]
	if b == nil {
		return nil, false
	}
	return b.fields[field], b.locked
}

// SetBucketField changes a kept bucket field behind the extension's back (drift); nil removes
// it. lock locks the retention policy.
func (g *GCS) SetBucketField(bucket, field string, value json.RawMessage, lock bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[bucket]
	if b == nil {
		b = &bucketState{created: time.Now(), fields: map[string]json.RawMessage{}, metageneration: 1}
		g.buckets[bucket] = b
	}
	if value == nil {
		delete(b.fields, field)
	} else {
		b.fields[field] = value
	}
	b.locked = b.locked || lock
	b.metageneration++
}

// DropLifecycleOnce makes the next lifecycle update of bucket answer as done without keeping it,
// the way fake-gcs-server drops every one: a client must read its rules back to notice.
func (g *GCS) DropLifecycleOnce(bucket string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.buckets[bucket]; b != nil {
		b.dropLifecycle++
	}
}

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
	if err := g.authorize(identity, r); err != nil {
		jsonError(w, http.StatusForbidden, "forbidden", err.Error())
		return
	}
	if g.opts.Delay > 0 {
		time.Sleep(g.opts.Delay)
	}
	var body []byte
	if !strings.HasPrefix(r.URL.Path, "/upload/") && r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
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
	case strings.HasPrefix(r.URL.Path, "/v1/projects/"):
		g.serveIAM(w, r, body)
	case isStorage && len(parts) == 3 && parts[0] == "b" && parts[2] == "iam":
		g.serveBucketPolicy(w, r, unescape(parts[1]), body)
	case isStorage && r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "b":
		g.createBucket(w, r, body)
	case isStorage && len(parts) == 2 && parts[0] == "b" && r.Method == http.MethodPatch:
		g.patchBucket(w, r, unescape(parts[1]), body)
	case isStorage && len(parts) == 3 && parts[0] == "b" && parts[2] == "lockRetentionPolicy":
		g.lockRetention(w, r, unescape(parts[1]))
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

func (g *GCS) createBucket(w http.ResponseWriter, r *http.Request, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		jsonError(w, http.StatusBadRequest, "invalid", "bad body")
		return
	}
	var name string
	_ = json.Unmarshal(req["name"], &name)
	if g.opts.ForeignPrefix != "" && strings.HasPrefix(name, g.opts.ForeignPrefix) {
		jsonError(w, http.StatusConflict, "conflict", "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.")
		return
	}
	if tooManyRules(req["lifecycle"]) {
		jsonError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("A bucket can have at most %d lifecycle rules.", maxLifecycleRules))
		return
	}
	state := &bucketState{created: time.Now(), fields: map[string]json.RawMessage{}, metageneration: 1}
	for _, f := range overlayFields {
		if v, ok := req[f]; ok && string(v) != "null" {
			state.fields[f] = v
		}
	}
	loc := "US"
	if v, ok := req["location"]; ok {
		_ = json.Unmarshal(v, &loc)
	}
	state.fields["location"], _ = json.Marshal(strings.ToUpper(loc))
	if _, ok := state.fields["softDeletePolicy"]; !ok {
		state.fields["softDeletePolicy"] = json.RawMessage(`{"retentionDurationSeconds":"604800"}`) // GCS's default
	}
	rec := &statusRecorder{ResponseWriter: w}
	g.proxy.ServeHTTP(rec, r)
	if rec.status/100 == 2 {
		g.mu.Lock()
		if _, exists := g.buckets[name]; !exists {
			g.buckets[name] = state
		}
		g.mu.Unlock()
	}
}

// statusRecorder remembers the status of a proxied response.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// checkMetageneration answers 412 when the request's precondition does not hold.
func checkMetageneration(w http.ResponseWriter, r *http.Request, b *bucketState) bool {
	if v := r.URL.Query().Get("ifMetagenerationMatch"); v != "" && v != strconv.FormatInt(b.metageneration, 10) {
		jsonError(w, http.StatusPreconditionFailed, "conditionNotMet", "Precondition Failed")
		return false
	}
	return true
}

func retentionSeconds(raw json.RawMessage) int64 {
	if raw == nil {
		return 0
	}
	var rp struct {
		RetentionPeriod json.Number `json:"retentionPeriod"`
	}
	_ = json.Unmarshal(raw, &rp)
	s, _ := strconv.ParseInt(strings.Trim(string(rp.RetentionPeriod), `"`), 10, 64)
	return s
}

func (g *GCS) patchBucket(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		jsonError(w, http.StatusBadRequest, "invalid", "bad body")
		return
	}
	g.mu.Lock()
	b := g.buckets[name]
	if b == nil {
		g.mu.Unlock()
		g.proxy.ServeHTTP(w, r) // fake-gcs-server answers 404
		return
	}
	if !checkMetageneration(w, r, b) {
		g.mu.Unlock()
		return
	}
	if tooManyRules(req["lifecycle"]) {
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("A bucket can have at most %d lifecycle rules.", maxLifecycleRules))
		return
	}
	if _, ok := req["lifecycle"]; ok && b.dropLifecycle > 0 {
		b.dropLifecycle--
		delete(req, "lifecycle")
	}
	if rp, ok := req["retentionPolicy"]; ok && b.locked {
		if string(rp) == "null" || retentionSeconds(rp) < retentionSeconds(b.fields["retentionPolicy"]) {
			g.mu.Unlock()
			jsonError(w, http.StatusForbidden, "forbidden", "Cannot remove or reduce the retention period of a locked retention policy.")
			return
		}
	}
	for _, f := range overlayFields {
		v, ok := req[f]
		switch {
		case !ok:
		case string(v) == "null":
			delete(b.fields, f)
		case f == "labels":
			labels := map[string]*string{}
			_ = json.Unmarshal(b.fields[f], &labels)
			var upd map[string]*string
			_ = json.Unmarshal(v, &upd)
			for k, val := range upd {
				if val == nil {
					delete(labels, k)
				} else {
					labels[k] = val
				}
			}
			b.fields[f], _ = json.Marshal(labels)
		default:
			b.fields[f] = v
		}
	}
	b.metageneration++
	// fake-gcs-server switches versioning off on any update that does not name it, and reads
	// nothing else of the body that the front does not keep: it gets the kept versioning alone.
	versioning := b.fields["versioning"]
	if versioning == nil {
		versioning = json.RawMessage(`{"enabled":false}`)
	}
	g.mu.Unlock()
	fwd, _ := json.Marshal(map[string]json.RawMessage{"versioning": versioning})
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(fwd)), int64(len(fwd))
	r.Header.Set("Content-Length", strconv.Itoa(len(fwd)))
	g.proxy.ServeHTTP(w, r)
}

// tooManyRules reports whether a lifecycle configuration has more rules than GCS accepts.
func tooManyRules(lifecycle json.RawMessage) bool {
	var lc struct {
		Rule []json.RawMessage `json:"rule"`
	}
	_ = json.Unmarshal(lifecycle, &lc)
	return len(lc.Rule) > maxLifecycleRules
}

func (g *GCS) lockRetention(w http.ResponseWriter, r *http.Request, name string) {
	g.mu.Lock()
	b := g.buckets[name]
	switch {
	case b == nil:
		g.mu.Unlock()
		jsonError(w, http.StatusNotFound, "notFound", "The specified bucket does not exist.")
		return
	case r.URL.Query().Get("ifMetagenerationMatch") == "":
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "required", "Required parameter: ifMetagenerationMatch")
		return
	case !checkMetageneration(w, r, b):
		g.mu.Unlock()
		return
	case retentionSeconds(b.fields["retentionPolicy"]) == 0:
		g.mu.Unlock()
		jsonError(w, http.StatusBadRequest, "invalid", "No retention policy to lock.")
		return
	}
	b.locked = true
	b.metageneration++
	g.mu.Unlock()
	// Answer with the bucket, as GCS does.
	get := r.Clone(r.Context())
	get.Method, get.Body, get.ContentLength = http.MethodGet, http.NoBody, 0
	get.URL = &url.URL{Path: "/storage/v1/b/" + name}
	g.proxy.ServeHTTP(w, get)
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
