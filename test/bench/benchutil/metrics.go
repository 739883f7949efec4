// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"context"
	"strconv"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Sample is one series of a scrape.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// MetricSet is a scrape of a Prometheus text endpoint.
type MetricSet []Sample

// Scrape reads the Prometheus text endpoint url (an extension's metrics).
func Scrape(ctx context.Context, url string) (MetricSet, error) {
	body, err := stack.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	return Parse(body), nil
}

// Parse parses a Prometheus text exposition (a scrape's body).
func Parse(body string) MetricSet {
	var out MetricSet
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, ok := parseLine(line)
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// parseLine parses `name{k="v",...} value` or `name value` (no timestamps; label values
// without escaped quotes, as this extension's and controller-runtime's are).
func parseLine(line string) (Sample, bool) {
	s := Sample{Labels: map[string]string{}}
	var rest string
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return s, false
		}
		s.Name, rest = line[:i], strings.TrimSpace(line[j+1:])
		for _, kv := range strings.Split(line[i+1:j], "\",") {
			k, v, ok := strings.Cut(kv, "=\"")
			if ok {
				s.Labels[strings.TrimSpace(k)] = strings.TrimSuffix(v, "\"")
			}
		}
	} else {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			return s, false
		}
		s.Name, rest = name, value
	}
	v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
	if err != nil {
		return s, false
	}
	s.Value = v
	return s, true
}

// By sums the series of name by the value of label (all series of name if label is "").
func (m MetricSet) By(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.Name == name {
			out[s.Labels[label]] += s.Value
		}
	}
	return out
}

// Delta is after minus before, by label.
func Delta(before, after MetricSet, name, label string) map[string]float64 {
	a, b := after.By(name, label), before.By(name, label)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// ByLabels sums the series of name by the values of labels, joined with a space (an empty value
// is left out, so {resource="leases",subresource=""} and {resource="leases"} are one key).
func (m MetricSet) ByLabels(name string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.Name != name {
			continue
		}
		var parts []string
		for _, l := range labels {
			if v := s.Labels[l]; v != "" {
				parts = append(parts, v)
			}
		}
		out[strings.Join(parts, " ")] += s.Value
	}
	return out
}
