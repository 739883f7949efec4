// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // Content-MD5 is what S3 asks for
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// S3Gaps is a proxy in front of MinIO that takes the three calls of gardener-extension-provider-aws
// v1.73.0's bucket creation that MinIO refuses (pkg/aws/client/client.go:366-493), so that the
// incumbent's code runs unchanged against MinIO:
//
//   - PutPublicAccessBlock (MinIO does not route it): recorded and answered 200; GET answers what
//     was recorded.
//   - a lifecycle holding AbortIncompleteMultipartUpload rules (MinIO refuses them): those rules
//     are recorded, the others are forwarded (re-signed, as the body changed), and a GET gives
//     MinIO's rules plus the recorded ones back, so that read-backs see the whole configuration.
//   - a bucket policy with the condition key s3:TlsVersion (MinIO: "invalid condition key"):
//     recorded and answered 204; a GET answers it while MinIO has no policy of its own.
//
// Everything else passes unchanged. Calls records every call it took instead of MinIO.
type S3Gaps struct {
	URL string

	target                    *url.URL
	accessKey, secret, region string
	server                    *http.Server

	mu     sync.Mutex
	pab    map[string][]byte
	abort  map[string][]string // bucket -> the inner XML of its recorded abort rules
	policy map[string][]byte
	calls  []string
}

// StartS3Gaps starts the proxy in front of m.
func StartS3Gaps(m *MinIO) (*S3Gaps, error) {
	u, err := url.Parse(m.Endpoint)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &S3Gaps{URL: "http://" + l.Addr().String(), target: u, accessKey: m.AccessKey, secret: m.SecretKey, region: m.Region,
		pab: map[string][]byte{}, abort: map[string][]string{}, policy: map[string][]byte{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	g.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.serve(w, r) {
			rp.ServeHTTP(w, r)
		}
	})}
	go func() { _ = g.server.Serve(l) }()
	return g, nil
}

// Close stops the proxy.
func (g *S3Gaps) Close() { _ = g.server.Close() }

// Calls returns what the proxy took instead of MinIO, as "METHOD bucket?api".
func (g *S3Gaps) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// AbortRules returns the inner XML of the abort rules recorded for bucket.
func (g *S3Gaps) AbortRules(bucket string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.abort[bucket]...)
}

func (g *S3Gaps) record(r *http.Request, bucket, api string) {
	g.calls = append(g.calls, r.Method+" "+bucket+"?"+api)
}

// serve answers the calls MinIO lacks; false: pass r on unchanged.
func (g *S3Gaps) serve(w http.ResponseWriter, r *http.Request) bool {
	bucket := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
	q := r.URL.Query()
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case q.Has("publicAccessBlock"):
		switch r.Method {
		case http.MethodPut:
			body, _ := io.ReadAll(r.Body)
			g.pab[bucket] = body
			g.record(r, bucket, "publicAccessBlock")
		case http.MethodGet:
			if b, ok := g.pab[bucket]; ok {
				w.Header().Set("Content-Type", "application/xml")
				_, _ = w.Write(b)
				return true
			}
			s3Error(w, http.StatusNotFound, "NoSuchPublicAccessBlockConfiguration")
		case http.MethodDelete:
			delete(g.pab, bucket)
			w.WriteHeader(http.StatusNoContent)
		}
		return true
	case q.Has("policy"):
		switch r.Method {
		case http.MethodPut:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !bytes.Contains(body, []byte("s3:TlsVersion")) {
				delete(g.policy, bucket)
				return false
			}
			g.policy[bucket] = body
			g.record(r, bucket, "policy")
			w.WriteHeader(http.StatusNoContent)
			return true
		case http.MethodGet:
			if b, ok := g.policy[bucket]; ok {
				_, _ = w.Write(b)
				return true
			}
		case http.MethodDelete:
			delete(g.policy, bucket)
		}
		return false
	case q.Has("lifecycle"):
		switch r.Method {
		case http.MethodPut:
			g.putLifecycle(w, r, bucket)
			return true
		case http.MethodGet:
			g.getLifecycle(w, r, bucket)
			return true
		case http.MethodDelete:
			delete(g.abort, bucket)
		}
	}
	return false
}

type lifecycleXML struct {
	XMLName xml.Name  `xml:"LifecycleConfiguration"`
	Rules   []ruleXML `xml:"Rule"`
}

type ruleXML struct {
	Inner string `xml:",innerxml"`
}

func (g *S3Gaps) putLifecycle(w http.ResponseWriter, r *http.Request, bucket string) {
	body, _ := io.ReadAll(r.Body)
	var lc lifecycleXML
	if err := xml.Unmarshal(body, &lc); err != nil {
		s3Error(w, http.StatusBadRequest, "MalformedXML")
		return
	}
	var abort []string
	var rest bytes.Buffer
	for _, rule := range lc.Rules {
		if strings.Contains(rule.Inner, "<AbortIncompleteMultipartUpload>") {
			abort = append(abort, rule.Inner)
			continue
		}
		rest.WriteString("<Rule>" + rule.Inner + "</Rule>")
	}
	if len(abort) == 0 {
		g.forward(w, r, body)
		return
	}
	g.abort[bucket] = abort
	g.record(r, bucket, "lifecycle (AbortIncompleteMultipartUpload)")
	if rest.Len() == 0 {
		// MinIO keeps nothing: its configuration goes.
		del := r.Clone(r.Context())
		del.Method = http.MethodDelete
		g.forwardAs(w, del, nil, http.StatusOK)
		return
	}
	g.forward(w, r, []byte(`<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+rest.String()+`</LifecycleConfiguration>`))
}

func (g *S3Gaps) getLifecycle(w http.ResponseWriter, r *http.Request, bucket string) {
	resp, err := g.send(r, nil)
	if err != nil {
		s3Error(w, http.StatusBadGateway, "InternalError")
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	abort := g.abort[bucket]
	if len(abort) == 0 || (resp.StatusCode != http.StatusOK && !bytes.Contains(body, []byte("NoSuchLifecycleConfiguration"))) {
		copyResponse(w, resp, body)
		return
	}
	var lc lifecycleXML
	if resp.StatusCode == http.StatusOK {
		_ = xml.Unmarshal(body, &lc)
	}
	var out strings.Builder
	out.WriteString(`<?xml version="1.0" encoding="UTF-8"?><LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, rule := range lc.Rules {
		out.WriteString("<Rule>" + rule.Inner + "</Rule>")
	}
	for _, a := range abort {
		out.WriteString("<Rule>" + a + "</Rule>")
	}
	out.WriteString("</LifecycleConfiguration>")
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write([]byte(out.String()))
}

// forward sends r with body (re-signed) to MinIO and copies the answer back.
func (g *S3Gaps) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	g.forwardAs(w, r, body, 0)
}

// forwardAs is forward; a non-zero status replaces a 2xx answer's status (a DELETE standing in
// for a PUT answers 204 where the PUT answers 200).
func (g *S3Gaps) forwardAs(w http.ResponseWriter, r *http.Request, body []byte, status int) {
	resp, err := g.send(r, body)
	if err != nil {
		s3Error(w, http.StatusBadGateway, "InternalError")
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if status != 0 && resp.StatusCode/100 == 2 {
		resp.StatusCode = status
	}
	copyResponse(w, resp, b)
}

// send makes r with body to MinIO, signed anew with MinIO's credentials.
func (g *S3Gaps) send(r *http.Request, body []byte) (*http.Response, error) {
	u := *g.target
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if len(body) > 0 {
		m := md5.Sum(body) //nolint:gosec // Content-MD5
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(m[:]))
		req.Header.Set("Content-Type", "application/xml")
	}
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: g.accessKey, SecretAccessKey: g.secret}, req, hash, "s3", g.region, time.Now()); err != nil {
		cancel()
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser

	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error { err := c.ReadCloser.Close(); c.cancel(); return err }

func copyResponse(w http.ResponseWriter, resp *http.Response, body []byte) {
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}
