// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package oci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
)

// Helm's media types for a chart stored in an OCI registry (what helm push writes, helm pull
// and gardener's OCI chart puller read).
const (
	ChartConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	ChartLayerMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ChartArtifact is a chart package (archive: the .tgz helm package writes, entries under the
// chart's name) as helm push stores it: an OCI image manifest whose config is chartYAML (the
// archive's Chart.yaml) as JSON and whose one layer is the archive.
func ChartArtifact(archive, chartYAML []byte) (v1.Image, error) {
	config, err := yaml.YAMLToJSON(chartYAML)
	if err != nil {
		return nil, fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	var meta struct{ Name, Version, Description string }
	if err := json.Unmarshal(config, &meta); err != nil {
		return nil, fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	if meta.Name == "" || meta.Version == "" {
		return nil, fmt.Errorf("the chart's Chart.yaml: name and version are required")
	}
	a := &artifact{config: config, layer: archive}
	manifest := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        descriptor(ChartConfigMediaType, config),
		Layers:        []v1.Descriptor{descriptor(ChartLayerMediaType, archive)},
		Annotations: map[string]string{
			"org.opencontainers.image.title":       meta.Name,
			"org.opencontainers.image.version":     meta.Version,
			"org.opencontainers.image.description": meta.Description,
		},
	}
	if a.manifest, err = json.Marshal(manifest); err != nil {
		return nil, err
	}
	return partial.CompressedToImage(a)
}

func descriptor(mt types.MediaType, data []byte) v1.Descriptor {
	h, n, _ := v1.SHA256(bytes.NewReader(data)) // reading from memory does not fail
	return v1.Descriptor{MediaType: mt, Size: n, Digest: h}
}

// artifact is an image whose config is not a container's (ggcr's mutate assumes one).
type artifact struct {
	manifest, config, layer []byte
}

func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }
func (a *artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d := descriptor(ChartLayerMediaType, a.layer); d.Digest == h {
		return blob{data: a.layer, desc: d}, nil
	}
	if d := descriptor(ChartConfigMediaType, a.config); d.Digest == h {
		return blob{data: a.config, desc: d}, nil
	}
	return nil, fmt.Errorf("no blob %s in the chart artifact", h)
}

type blob struct {
	data []byte
	desc v1.Descriptor
}

func (b blob) Digest() (v1.Hash, error)            { return b.desc.Digest, nil }
func (b blob) Size() (int64, error)                { return b.desc.Size, nil }
func (b blob) MediaType() (types.MediaType, error) { return b.desc.MediaType, nil }
func (b blob) Compressed() (io.ReadCloser, error)  { return io.NopCloser(bytes.NewReader(b.data)), nil }

// ChartLayout is the directory under WriteChart's out that holds the charts' OCI layouts, one
// per chart (ChartLayoutOf).
const ChartLayout = "oci"

// ChartLayoutOf is the OCI layout of chart c under WriteChart's out: out/ChartLayout/<c.Name>.
func ChartLayoutOf(out string, c charts.Chart) string {
	return filepath.Join(out, ChartLayout, c.Name)
}

// WriteChart writes chart c as release r ships it (charts.Chart.Package) to out as
// <name>-<version>.tgz (helm package's name) and as an OCI artifact to the layout
// ChartLayoutOf(out, c), tagged r.Tag; it returns the .tgz's path.
func WriteChart(c charts.Chart, r charts.Release, out string) (string, error) {
	archive, chartYAML, err := c.Package(r)
	if err != nil {
		return "", err
	}
	img, err := ChartArtifact(archive, chartYAML)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	tgz := filepath.Join(out, c.Name+"-"+r.Tag+".tgz")
	if err := os.WriteFile(tgz, archive, 0o644); err != nil {
		return "", err
	}
	return tgz, WriteImage(ChartLayoutOf(out, c), img, r.Tag)
}
