// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package oci_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	"github.com/gardener/gardener/pkg/chartrenderer"
	ociutils "github.com/gardener/gardener/pkg/utils/oci"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/version"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/hack/release/oci"
)

// TestImage builds the local provider's image for this machine's architecture (one binary, to
// keep it short) into a layout, reads it back as a registry would serve it, and runs what a
// kubelet would: the entrypoint, as the user the image names.
func TestImage(t *testing.T) {
	ctx := context.Background()
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	dir := filepath.Join(t.TempDir(), "image")
	if err := oci.WriteImageOf(ctx, oci.CommandPackage("local"), []v1.Platform{platform}, dir, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	idx := onlyIndex(t, dir, "1.2.3")
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Platform == nil || !m.Manifests[0].Platform.Equals(platform) {
		t.Fatalf("index manifests %+v; want one for %s", m.Manifests, platform.String())
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != oci.BinaryPath {
		t.Errorf("entrypoint %q; want [%s]", got, oci.BinaryPath)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q; want 65532:65532 (nonroot)", cfg.Config.User)
	}
	if cfg.OS != platform.OS || cfg.Architecture != platform.Architecture {
		t.Errorf("config platform %s/%s; want %s", cfg.OS, cfg.Architecture, platform.String())
	}

	files := extract(t, img)
	bin, ok := files[strings.TrimPrefix(oci.BinaryPath, "/")]
	if !ok || bin.hdr.Typeflag != tar.TypeReg || bin.hdr.Mode&0o111 != 0o111 || len(bin.data) == 0 {
		t.Fatalf("%s: %+v; want an executable regular file", oci.BinaryPath, bin.hdr)
	}
	ca, ok := files[strings.TrimPrefix(oci.CABundlePath, "/")]
	if !ok || ca.hdr.Mode&0o444 != 0o444 {
		t.Fatalf("%s missing or not readable by all", oci.CABundlePath)
	}
	if n := certificates(t, ca.data); n < 100 {
		t.Errorf("%s holds %d certificates; want Mozilla's root store (over 100)", oci.CABundlePath, n)
	}
	if !strings.Contains(string(files["etc/passwd"].data), "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", files["etc/passwd"].data)
	}
	if home := files["home/nonroot"].hdr; home == nil || home.Uid != oci.NonRoot {
		t.Errorf("/home/nonroot: %+v; want a directory of 65532", home)
	}
	if tmp := files["tmp"].hdr; tmp == nil || tmp.Mode != 0o1777 {
		t.Errorf("/tmp: %+v; want mode 1777", tmp)
	}

	// The image has no loader or libc: the binary must be static to start in it.
	exe := filepath.Join(t.TempDir(), "entrypoint")
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	if f, err := elf.Open(exe); err != nil {
		t.Fatal(err)
	} else {
		defer f.Close()
		libs, _ := f.ImportedLibraries()
		if f.Section(".interp") != nil || len(libs) > 0 {
			t.Errorf("the binary is dynamically linked (%v); want a static one (CGO_ENABLED=0)", libs)
		}
	}
	out, err := exec.CommandContext(ctx, exe, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--local-root") {
		t.Errorf("%s --help: %v\n%s", oci.BinaryPath, err, out)
	}

	// Push sends the index as make push-images does (to a registry in this process).
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/releases/gardener-extension-backup-local:1.2.3"
	if err := oci.Push(ctx, dir, ref); err != nil {
		t.Fatal(err)
	}
	pushed, err := remote.Index(mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if got, err := pushed.Digest(); err != nil || got != want {
		t.Errorf("pushed index %s (%v); want %s", got, err, want)
	}
}

// TestChart packages the chart for a release, checks that helm's loader (through gardener's
// chart renderer) renders the archive with the release's image, pushes the OCI artifact, and
// pulls it back with gardener's own OCI chart puller (what gardenlet and gardener-operator use).
func TestChart(t *testing.T) {
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	r := charts.Release{Registry: strings.TrimPrefix(reg.URL, "http://") + "/releases", Tag: "1.2.3"}
	out := t.TempDir()
	tgz, err := oci.WriteChart(r, out)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(tgz) != "gardener-extension-backup-1.2.3.tgz" {
		t.Errorf("chart package %s; want helm package's name gardener-extension-backup-1.2.3.tgz", tgz)
	}
	archive, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	renderer := chartrenderer.NewWithServerVersion(&version.Info{Major: "1", Minor: "36"})
	rendered, err := renderer.RenderArchive(archive, "backup", "extension-backup", map[string]any{"provider": "aws"})
	if err != nil {
		t.Fatalf("the packaged chart does not render: %v", err)
	}
	if rendered.ChartName != "gardener-extension-backup" {
		t.Errorf("chart name %q", rendered.ChartName)
	}
	if image := r.Image("aws"); !strings.Contains(string(rendered.Manifest()), "image: "+image+"\n") {
		t.Errorf("the packaged chart does not deploy %s by default", image)
	}

	if err := oci.Push(ctx, filepath.Join(out, oci.ChartLayout), r.ChartRef()); err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(mustRef(t, r.ChartRef()))
	if err != nil {
		t.Fatal(err)
	}
	img, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != oci.ChartConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != oci.ChartLayerMediaType {
		t.Errorf("chart manifest %+v; want helm's config and one chart layer", m)
	}
	ref := r.ChartRef()
	pulled, err := ociutils.NewHelmRegistry(nil).Pull(ctx, &gardencorev1.OCIRepository{Ref: &ref})
	if err != nil {
		t.Fatalf("gardener's OCI puller: %v", err)
	}
	if !bytes.Equal(pulled, archive) {
		t.Error("gardener pulled another archive than the one packaged")
	}
}

// TestPackage: the default release packages the chart's own Chart.yaml and values.yaml, and a
// tag helm cannot take as the chart's version is refused.
func TestPackage(t *testing.T) {
	r, err := charts.DefaultRelease()
	if err != nil {
		t.Fatal(err)
	}
	if r.Registry == "" || r.Tag == "" {
		t.Fatalf("default release %+v", r)
	}
	_, chartYAML, err := charts.Package(r)
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := charts.FS.ReadFile(charts.ChartPath + "/Chart.yaml"); !bytes.Equal(own, chartYAML) {
		t.Errorf("the default release changes Chart.yaml:\n%s", chartYAML)
	}
	if _, _, err := charts.Package(r.With("", "latest")); err == nil || !strings.Contains(err.Error(), "semantic version") {
		t.Errorf("tag latest: %v; want a refusal naming the semantic version", err)
	}
	if _, _, err := charts.Package(r.With("Not A Registry", "")); err == nil || !strings.Contains(err.Error(), "registry") {
		t.Errorf("registry with spaces: %v; want a refusal naming the registry", err)
	}
}

func onlyIndex(t *testing.T, dir, tag string) v1.ImageIndex {
	t.Helper()
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tag {
		t.Fatalf("layout %s holds %+v; want one image index tagged %s", dir, m.Manifests, tag)
	}
	idx, err := root.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

type entry struct {
	hdr  *tar.Header
	data []byte
}

// extract is the image's file system (its layers flattened) by path without the leading slash.
func extract(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = entry{hdr: h, data: data}
	}
}

func certificates(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Fatalf("the CA bundle holds a certificate that does not parse: %v", err)
		}
		n++
	}
	if len(bytes.TrimSpace(data)) > 0 {
		t.Fatal("the CA bundle holds something other than PEM certificates")
	}
	return n
}

func mustRef(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
