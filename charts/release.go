// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts

import (
	"io/fs"
	"strconv"
)

// Chart is one of the charts a release ships, as Package packages it.
type Chart struct {
	// Name is the chart's name (its Chart.yaml's): the top directory of its archive and the
	// last element of its OCI repository.
	Name string
	fsys fs.FS
	dir  string
	// image is what a release sets under values.yaml's image block, key by key, as YAML
	// scalars; nil: the chart deploys no image of its own.
	image func(Release) map[string]string
}

// The charts of a release: the seed's (gardenlet or gardener-operator installs it per provider)
// and the garden admission's two (gardener-operator's Extension, AdmissionExtension).
var (
	SeedChart = Chart{Name: ChartPath, fsys: FS, dir: ChartPath, image: func(r Release) map[string]string {
		return map[string]string{"registry": r.Registry, "tag": strconv.Quote(r.Tag)}
	}}
	AdmissionRuntimeChart = Chart{Name: "gardener-extension-backup-admission-runtime", fsys: AdmissionFS, dir: AdmissionRuntimePath, image: func(r Release) map[string]string {
		return map[string]string{"repository": r.ImageRepository("admission"), "tag": strconv.Quote(r.Tag)}
	}}
	AdmissionApplicationChart = Chart{Name: "gardener-extension-backup-admission-application", fsys: AdmissionFS, dir: AdmissionApplicationPath}
)

// ReleaseCharts are the charts make chart packages and make push-chart pushes.
func ReleaseCharts() []Chart {
	return []Chart{SeedChart, AdmissionRuntimeChart, AdmissionApplicationChart}
}

// ChartRefOf is chart c of the release as an OCI reference: <Registry>/charts/<c.Name>:<Tag>.
func (r Release) ChartRefOf(c Chart) string { return r.Registry + "/charts/" + c.Name + ":" + r.Tag }

// AdmissionRuntimeChartRef is the release's admission runtime chart as an OCI reference.
func (r Release) AdmissionRuntimeChartRef() string { return r.ChartRefOf(AdmissionRuntimeChart) }

// AdmissionApplicationChartRef is the release's admission application chart as an OCI reference.
func (r Release) AdmissionApplicationChartRef() string {
	return r.ChartRefOf(AdmissionApplicationChart)
}
