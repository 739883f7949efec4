// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts

import (
	"github.com/gardener/gardener/pkg/chartrenderer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/version"
)

// Render renders the chart with values (merged over values.yaml and checked against
// values.schema.json) as release "backup" in namespace, and returns its objects in install order.
func Render(namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	r := chartrenderer.NewWithServerVersion(&version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4"})
	rendered, err := r.RenderEmbeddedFS(FS, ChartPath, "backup", namespace, values)
	if err != nil {
		return nil, err
	}
	return decodeManifest(rendered.Manifest())
}
