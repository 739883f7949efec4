// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
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

// TestChart packages each chart of a release (the seed's and the admission's two), checks that
// helm's loader (through gardener's chart renderer) renders the archive with the release's
// version and image, pushes the OCI artifact, and pulls it back with gardener's own OCI chart
// puller (what gardenlet and gardener-operator use).
func TestChart(t *testing.T) {
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	r := charts.Release{Registry: strings.TrimPrefix(reg.URL, "http://") + "/releases", Tag: "1.2.3"}
	cases := []struct {
		chart  charts.Chart
		ref    string
		values map[string]any
		image  string // the image the chart deploys by default; "": none
	}{
		{charts.SeedChart, r.ChartRef(), map[string]any{"provider": "aws"}, r.Image("aws")},
		{charts.AdmissionRuntimeChart, r.AdmissionRuntimeChartRef(), map[string]any{}, r.Image("admission")},
		{charts.AdmissionApplicationChart, r.AdmissionApplicationChartRef(), map[string]any{}, ""},
	}
	if got := len(charts.ReleaseCharts()); got != len(cases) {
		t.Fatalf("%d release charts; the test knows %d", got, len(cases))
	}
	out := t.TempDir()
	for i, c := range cases {
		t.Run(c.chart.Name, func(t *testing.T) {
			if c.chart.Name != charts.ReleaseCharts()[i].Name {
				t.Fatalf("release chart %d is %s; want %s", i, charts.ReleaseCharts()[i].Name, c.chart.Name)
			}
			if want := r.Registry + "/charts/" + c.chart.Name + ":1.2.3"; c.ref != want {
				t.Errorf("chart reference %s; want %s", c.ref, want)
			}
			tgz, err := oci.WriteChart(c.chart, r, out)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.chart.Name + "-1.2.3.tgz"; filepath.Base(tgz) != want {
				t.Errorf("chart package %s; want helm package's name %s", tgz, want)
			}
			archive, err := os.ReadFile(tgz)
			if err != nil {
				t.Fatal(err)
			}
			renderer := chartrenderer.NewWithServerVersion(&version.Info{Major: "1", Minor: "36"})
			rendered, err := renderer.RenderArchive(archive, "backup", "extension-backup", c.values)
			if err != nil {
				t.Fatalf("the packaged chart does not render: %v", err)
			}
			if rendered.ChartName != c.chart.Name {
				t.Errorf("chart name %q; want %q", rendered.ChartName, c.chart.Name)
			}
			if c.image != "" && !strings.Contains(string(rendered.Manifest()), "image: "+c.image+"\n") {
				t.Errorf("the packaged chart does not deploy %s by default", c.image)
			}
			if c.image == "" && strings.Contains(string(rendered.Manifest()), "image:") {
				t.Errorf("the packaged chart deploys an image:\n%s", rendered.Manifest())
			}
			chartYAML := archiveFile(t, archive, c.chart.Name+"/Chart.yaml")
			if !strings.Contains(chartYAML, "\nversion: 1.2.3\n") || !strings.Contains(chartYAML, "\nappVersion: \"1.2.3\"\n") {
				t.Errorf("the packaged Chart.yaml does not name the release's version:\n%s", chartYAML)
			}

			if err := oci.Push(ctx, oci.ChartLayoutOf(out, c.chart), c.ref); err != nil {
				t.Fatal(err)
			}
			desc, err := remote.Get(mustRef(t, c.ref))
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
			ref := c.ref
			pulled, err := ociutils.NewHelmRegistry(nil).Pull(ctx, &gardencorev1.OCIRepository{Ref: &ref})
			if err != nil {
				t.Fatalf("gardener's OCI puller: %v", err)
			}
			if !bytes.Equal(pulled, archive) {
				t.Error("gardener pulled another archive than the one packaged")
			}
		})
	}
}

// TestPackage: the default release packages each chart's own Chart.yaml and values.yaml (comments
// and all), and a tag helm cannot take as the chart's version is refused.
func TestPackage(t *testing.T) {
	r, err := charts.DefaultRelease()
	if err != nil {
		t.Fatal(err)
	}
	if r.Registry == "" || r.Tag == "" {
		t.Fatalf("default release %+v", r)
	}
	sources := map[string]string{
		charts.SeedChart.Name:                 charts.ChartPath,
		charts.AdmissionRuntimeChart.Name:     charts.AdmissionRuntimePath,
		charts.AdmissionApplicationChart.Name: charts.AdmissionApplicationPath,
	}
	for _, c := range charts.ReleaseCharts() {
		t.Run(c.Name, func(t *testing.T) {
			src, ok := sources[c.Name]
			if !ok {
				t.Fatalf("no source directory known for %s", c.Name)
			}
			archive, chartYAML, err := c.Package(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"Chart.yaml", "values.yaml"} {
				own, err := fs.ReadFile(charts.FS, src+"/"+f)
				if err != nil {
					own, err = fs.ReadFile(charts.AdmissionFS, src+"/"+f)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := archiveFile(t, archive, c.Name+"/"+f); got != string(own) {
					t.Errorf("the default release changes %s:\n%s", f, got)
				}
			}
			if got := archiveFile(t, archive, c.Name+"/Chart.yaml"); got != string(chartYAML) {
				t.Errorf("Package returns another Chart.yaml than it archives:\n%s", chartYAML)
			}
			if _, _, err := c.Package(r.With("", "latest")); err == nil || !strings.Contains(err.Error(), "semantic version") {
				t.Errorf("tag latest: %v; want a refusal naming the semantic version", err)
			}
			if _, _, err := c.Package(r.With("Not A Registry", "")); err == nil || !strings.Contains(err.Error(), "registry") {
				t.Errorf("registry with spaces: %v; want a refusal naming the registry", err)
			}
		})
	}
}

// archiveFile is the file name in a chart archive (.tgz).
func archiveFile(t *testing.T, archive []byte, name string) string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the archive holds no %s", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
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
