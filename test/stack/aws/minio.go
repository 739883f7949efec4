// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/madmin-go/v3"
	miniocredentials "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// MinIOOptions configure a MinIO server.
type MinIOOptions struct {
	// Region is the server's region (default us-east-1).
	Region string
	// WithoutKMS starts it without a KMS key, so that it refuses default encryption with
	// NotImplemented, as some S3-compatible stores do.
	WithoutKMS bool
	// TLS serves https with a new self-signed certificate (MinIO's --certs-dir), which SecretData
	// gives as trustedCaCert. MinIO refuses customer-provided keys (SSE-C) over plain http.
	TLS bool
}

// MinIO is a running MinIO server with its root credentials.
type MinIO struct {
	Endpoint  string
	AccessKey string
	SecretKey string
	Region    string
	// CA is the server's certificate (PEM) with TLS, nil without.
	CA   []byte
	cmd  *exec.Cmd
	dir  string
	http *http.Client
}

// StartMinIO starts MinIO on a free loopback port with its data in a new temporary folder.
func StartMinIO(ctx context.Context, opts MinIOOptions) (*MinIO, error) {
	bin, err := stack.Tool("minio", "GEB_MINIO")
	if err != nil {
		return nil, err
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	dir, err := os.MkdirTemp("", "geb-minio-")
	if err != nil {
		return nil, err
	}
	ports, err := stack.FreePorts(2)
	if err != nil {
		return nil, err
	}
	port, console := ports[0], ports[1]
	m := &MinIO{
		Endpoint:  fmt.Sprintf("http://127.0.0.1:%d", port),
		AccessKey: "minio-root",
		SecretKey: "minio-root-secret-" + randomString(8),
		Region:    opts.Region,
		dir:       dir,
		http:      http.DefaultClient,
	}
	log, err := os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		return nil, err
	}
	args := []string{"server", filepath.Join(dir, "data"),
		"--address", fmt.Sprintf("127.0.0.1:%d", port), "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet"}
	if opts.TLS {
		if args, err = m.serveTLS(args); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+m.AccessKey, "MINIO_ROOT_PASSWORD="+m.SecretKey,
		"MINIO_REGION="+opts.Region, "MINIO_SITE_REGION="+opts.Region,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	if !opts.WithoutKMS {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		cmd.Env = append(cmd.Env, "MINIO_KMS_SECRET_KEY=backup-key:"+base64.StdEncoding.EncodeToString(key))
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting minio: %w", err)
	}
	m.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := m.http.Get(m.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			m.Stop()
			logData, _ := os.ReadFile(filepath.Join(dir, "minio.log"))
			return nil, fmt.Errorf("minio did not become ready: %v\n%s", err, logData)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serveTLS writes a new certificate where MinIO's --certs-dir looks for it (public.crt,
// private.key), makes the endpoint https and this process's clients trust the certificate.
func (m *MinIO) serveTLS(args []string) ([]string, error) {
	cert, key, err := stack.SelfSignedCert()
	if err != nil {
		return nil, err
	}
	certs := filepath.Join(m.dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certs, "public.crt"), cert, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certs, "private.key"), key, 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cert)
	m.CA, m.Endpoint = cert, "https"+strings.TrimPrefix(m.Endpoint, "http")
	m.http = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return append(args, "--certs-dir", certs), nil
}

// Stop ends the server and removes its data.
func (m *MinIO) Stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = m.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = m.cmd.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(m.dir)
}

// S3Client returns a plain SDK client with the root credentials, reaching the server directly:
// for tests to inspect buckets and to cause drift behind the extension's back.
func (m *MinIO) S3Client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     m.Region,
		BaseEndpoint:               aws.String(m.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		HTTPClient:                 m.http,
	})
}

// Admin returns a MinIO admin client with the root credentials, reaching the server directly.
func (m *MinIO) Admin() (*madmin.AdminClient, error) {
	u, err := url.Parse(m.Endpoint)
	if err != nil {
		return nil, err
	}
	return madmin.NewWithOptions(u.Host, &madmin.Options{Creds: miniocredentials.NewStaticV4(m.AccessKey, m.SecretKey, ""), Secure: u.Scheme == "https", Transport: m.http.Transport})
}

// ServiceAccounts lists every service account of every MinIO user (not the root's): what a test
// inspects to see which principals exist, whoever created them.
func (m *MinIO) ServiceAccounts(ctx context.Context) ([]madmin.ServiceAccountInfo, error) {
	admin, err := m.Admin()
	if err != nil {
		return nil, err
	}
	users, err := admin.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	var out []madmin.ServiceAccountInfo
	for _, user := range slices.Sorted(maps.Keys(users)) {
		resp, err := admin.ListServiceAccounts(ctx, user)
		if err != nil {
			return nil, fmt.Errorf("listing the service accounts of MinIO user %s: %w", user, err)
		}
		out = append(out, resp.Accounts...)
	}
	return out, nil
}

// Leftovers lists what MinIO holds of user and policy, for tests that look for what a sweep
// leaves: the descriptions of user's service accounts, then "user" and "policy" while they
// exist, sorted.
func (m *MinIO) Leftovers(ctx context.Context, user, policy string) ([]string, error) {
	admin, err := m.Admin()
	if err != nil {
		return nil, err
	}
	var out []string
	accounts, err := admin.ListServiceAccounts(ctx, user)
	if err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser" {
		return nil, err
	}
	for _, a := range accounts.Accounts {
		out = append(out, a.Description)
	}
	users, err := admin.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := users[user]; ok {
		out = append(out, "user")
	}
	policies, err := admin.ListCannedPolicies(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := policies[policy]; ok {
		out = append(out, "policy")
	}
	slices.Sort(out)
	return out, nil
}

// SecretData is the data of an aws-type credentials secret for this server (with TLS, its
// certificate as trustedCaCert).
func (m *MinIO) SecretData() map[string][]byte {
	d := map[string][]byte{
		"accessKeyID":      []byte(m.AccessKey),
		"secretAccessKey":  []byte(m.SecretKey),
		"region":           []byte(m.Region),
		"endpoint":         []byte(m.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	}
	if m.CA != nil {
		d["trustedCaCert"] = m.CA
	}
	return d
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
