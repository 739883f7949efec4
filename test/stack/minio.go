package stack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MinIOOptions configure a MinIO server.
type MinIOOptions struct {
	// Region is the server's region (default us-east-1).
	Region string
	// WithoutKMS starts it without a KMS key, so that it refuses default encryption with
	// NotImplemented, as some S3-compatible stores do.
	WithoutKMS bool
}

// MinIO is a running MinIO server with its root credentials.
type MinIO struct {
	Endpoint  string
	AccessKey string
	SecretKey string
	Region    string
	cmd       *exec.Cmd
	dir       string
}

// StartMinIO starts MinIO on a free loopback port with its data in a new temporary folder.
func StartMinIO(ctx context.Context, opts MinIOOptions) (*MinIO, error) {
	bin, err := Tool("minio", "GEB_MINIO")
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
	ports, err := FreePorts(2)
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
	}
	log, err := os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "server", filepath.Join(dir, "data"),
		"--address", fmt.Sprintf("127.0.0.1:%d", port), "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet")
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
		resp, err := http.Get(m.Endpoint + "/minio/health/ready")
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
	})
}

// SecretData is the data of an aws-type credentials secret for this server.
func (m *MinIO) SecretData() map[string][]byte {
	return map[string][]byte{
		"accessKeyID":      []byte(m.AccessKey),
		"secretAccessKey":  []byte(m.SecretKey),
		"region":           []byte(m.Region),
		"endpoint":         []byte(m.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	}
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
