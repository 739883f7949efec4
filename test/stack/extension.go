// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Extension is a provider binary running as a process against an envtest API server, as the
// chart runs it: leader election on, health and metrics endpoints on free local ports.
type Extension struct {
	// HealthURL and MetricsURL are the endpoints' base URLs.
	HealthURL, MetricsURL string
	// LogPath is the file the process writes its log to.
	LogPath string
	cmd     *exec.Cmd
}

// StartExtension starts binary with a kubeconfig of a system:masters user of env, written with
// its log into dir, and extra flags; it returns once /readyz answers.
func StartExtension(ctx context.Context, env *envtest.Environment, binary, dir string, flags ...string) (*Extension, error) {
	return StartExtensionAs(ctx, env, envtest.User{Name: "gardener-extension-backup", Groups: []string{"system:masters"}}, binary, dir, flags...)
}

// StartExtensionAs is StartExtension as identity: a user whose name is a ServiceAccount's
// (system:serviceaccount:<namespace>:<name>) is authorized as that ServiceAccount is, by RBAC.
func StartExtensionAs(ctx context.Context, env *envtest.Environment, identity envtest.User, binary, dir string, flags ...string) (*Extension, error) {
	user, err := env.AddUser(identity, nil)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	e := &Extension{
		HealthURL:  fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1]),
		LogPath:    filepath.Join(dir, "extension.log"),
	}
	logFile, err := os.Create(e.LogPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the process has its own descriptor
	args := append([]string{"--kubeconfig", kubeconfigPath, "--leader-election", "--leader-election-namespace", "garden",
		"--health-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--log-format", "text"}, flags...)
	e.cmd = exec.Command(binary, args...)
	e.cmd.Stdout, e.cmd.Stderr = logFile, logFile
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := e.cmd.Start(); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, e.HealthURL+"/readyz"); err != nil {
		e.Stop()
		return nil, fmt.Errorf("the extension did not become ready (log: %s): %w", e.LogPath, err)
	}
	return e, nil
}

// Stop ends the process (SIGTERM, as the kubelet does) and waits for it.
func (e *Extension) Stop() {
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	_ = e.cmd.Wait()
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill does (no lease release, no
// cleanup), and waits for it.
func (e *Extension) Kill() {
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
}

// Get returns the body of a GET of url, failing on any status but 200.
func Get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

func waitHTTP(ctx context.Context, url string) error {
	for {
		if _, err := Get(ctx, url); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// BuildBinary builds the provider binary of providerType into dir and returns its path.
func BuildBinary(dir, providerType string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "gardener-extension-backup-"+providerType)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/gardener-extension-backup-"+providerType)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w: %s", out, err, b)
	}
	return out, nil
}

// Pid is the process id of the extension (for benchmarks that read its RSS and CPU from /proc).
func (e *Extension) Pid() int { return e.cmd.Process.Pid }
