package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// sample is one series of a scrape.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metricSet is a scrape of a Prometheus text endpoint.
type metricSet []sample

func scrape(ctx context.Context, url string) (metricSet, error) {
	body, err := stack.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	var out metricSet
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, ok := parseLine(line)
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// parseLine parses `name{k="v",...} value` or `name value` (no timestamps; label values
// without escaped quotes, as this extension's and controller-runtime's are).
func parseLine(line string) (sample, bool) {
	s := sample{labels: map[string]string{}}
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return s, false
		}
		s.name, rest = line[:i], strings.TrimSpace(line[j+1:])
		for _, kv := range strings.Split(line[i+1:j], "\",") {
			k, v, ok := strings.Cut(kv, "=\"")
			if ok {
				s.labels[strings.TrimSpace(k)] = strings.TrimSuffix(v, "\"")
			}
		}
	} else {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			return s, false
		}
		s.name, rest = name, value
	}
	v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
	if err != nil {
		return s, false
	}
	s.value = v
	return s, true
}

// by sums the series of name by the value of label (all series of name if label is "").
func (m metricSet) by(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.name == name {
			out[s.labels[label]] += s.value
		}
	}
	return out
}

// delta is after minus before, by label.
func delta(before, after metricSet, name, label string) map[string]float64 {
	a, b := after.by(name, label), before.by(name, label)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
