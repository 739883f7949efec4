// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// GardenerCRDs returns the paths of gardener's BackupBucket, BackupEntry, Extension, Cluster and Garden CRDs,
// shipped inside the gardener module this project is built with.
func GardenerCRDs() ([]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/gardener")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating the gardener module: %w", err)
	}
	module := strings.TrimSpace(string(out))
	dir := filepath.Join(module, "pkg", "component", "extensions", "crds", "assets")
	return []string{
		filepath.Join(dir, "crd-extensions.gardener.cloud_backupbuckets.yaml"),
		filepath.Join(dir, "crd-extensions.gardener.cloud_backupentries.yaml"),
		// The seed's Extension backup-<provider> holds the seed configuration (pkg/controller/seedconfig).
		filepath.Join(dir, "crd-extensions.gardener.cloud_extensions.yaml"),
		// gardenlet writes a Cluster per shoot; the entry's freshness reads its hibernation.
		filepath.Join(dir, "crd-extensions.gardener.cloud_clusters.yaml"),
		// gardener-operator's Garden: a garden's entry is located through it.
		filepath.Join(module, "example", "operator", "10-crd-operator.gardener.cloud_gardens.yaml"),
	}, nil
}

// EtcdCRD returns the path of etcd-druid's Etcd CRD (the CEL variant, for Kubernetes >= 1.29),
// shipped inside the etcd-druid/api module this project is built with: every seed has it
// (gardenlet deploys etcd-druid's CRDs before it waits for the extensions), and the BackupEntry
// controller watches the shoots' Etcds.
func EtcdCRD() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/etcd-druid/api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the etcd-druid/api module: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "core", "v1alpha1", "crds", "druid.gardener.cloud_etcds.yaml"), nil
}

// StartEnvtest starts a real kube-apiserver and etcd with gardener's backup CRDs and
// etcd-druid's Etcd CRD installed.
func StartEnvtest() (*envtest.Environment, *rest.Config, error) {
	assets, err := Tool("envtest", "KUBEBUILDER_ASSETS")
	if err != nil {
		return nil, nil, err
	}
	crds, err := GardenerCRDs()
	if err != nil {
		return nil, nil, err
	}
	etcdCRD, err := EtcdCRD()
	if err != nil {
		return nil, nil, err
	}
	crds = append(crds, etcdCRD)
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting envtest: %w", err)
	}
	return env, cfg, nil
}
