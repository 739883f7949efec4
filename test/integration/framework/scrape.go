// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Sample is one sample of a metric family: its labels and value (a histogram's: its count).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Scrape is a metrics endpoint's samples by family name.
type Scrape map[string][]Sample

// Get returns the samples of family name whose labels include want.
func (s Scrape) Get(name string, want map[string]string) []Sample {
	var out []Sample
	for _, smp := range s[name] {
		match := true
		for k, v := range want {
			match = match && smp.Labels[k] == v
		}
		if match {
			out = append(out, smp)
		}
	}
	return out
}

// ScrapeMetrics reads and parses the metrics endpoint url (Prometheus' text format).
func ScrapeMetrics(t *testing.T, url string) Scrape {
	t.Helper()
	body, err := stack.Get(Ctx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := Scrape{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[name] = append(out[name], Sample{Labels: labels, Value: value(f.GetType(), m)})
		}
	}
	return out
}

// value is a sample's value; a histogram's is its count.
func value(t dto.MetricType, m *dto.Metric) float64 {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}
