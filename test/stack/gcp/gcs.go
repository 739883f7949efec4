// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
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

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
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
//   - a copy's ifSourceGenerationMatch and ifGenerationMatch are checked (gcs_rewrite.go;
//     fake-gcs-server ignores them there; it honours ifGenerationMatch on uploads);
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
//     out and workload identity act as the project's owner;
//   - managed folders (gcs_folders.go) and their IAM policies, enforced as GCS documents them: a
//     role on folder `F/` reaches the objects whose names start with `F/`, listings only with
//     such a prefix.
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
	uploads         map[string]string // resumable upload ID -> the object it writes (gcs_folders.go)
	// serviceAccountLimit caps the project's service accounts (0: none).
	serviceAccountLimit int
	// refuseOnce is a request RefuseOnce makes the front refuse (method and path; zero: none).
	refuseOnce [2]string
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
	// folders are the bucket's managed folders and their IAM policies (gcs_folders.go).
	folders    map[string]*bucketPolicy
	folderMeta map[string]managedFolder
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
	bin, err := stack.Tool("fakegcs", "FAKE_GCS_SERVER")
	if err != nil {
		return nil, err
	}
	port, err := stack.FreePort()
	if err != nil {
		return nil, err
	}
	backendURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	args := []string{"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port), "-backend", "memory",
		"-external-url", backendURL, "-public-host", fmt.Sprintf("127.0.0.1:%d", port), "-log-level", "error"}
	var root string
	if opts.Filesystem {
		if root, err = os.MkdirTemp(stack.Tmpfs(), "fake-gcs-"); err != nil {
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
		uploads:         map[string]string{},
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

// RefuseOnce makes the front answer the next request of method to path with 403
// PERMISSION_DENIED, as GCP answers a caller without the permission: a pass interrupted there.
func (g *GCS) RefuseOnce(method, path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuseOnce = [2]string{method, path}
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
