// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts

import (
	"strings"
	"testing"
)

// TestPackageReadsTheReleaseBack: Chart.Package refuses a chart it cannot set to the release,
// and its read-back refuses a Chart.yaml or values.yaml that names another release than it set.
func TestPackageReadsTheReleaseBack(t *testing.T) {
	r := Release{Registry: "example.org/releases", Tag: "1.2.3"}
	noLine := AdmissionApplicationChart
	noLine.image = func(Release) map[string]string { return map[string]string{"tag": `"1.2.3"`} }
	if _, _, err := noLine.Package(r); err == nil || !strings.Contains(err.Error(), "no line image.tag") {
		t.Errorf("a chart without the image line: %v; want a refusal naming image.tag", err)
	}
	chartYAML := "name: gardener-extension-backup-admission-runtime\nversion: 1.2.3\nappVersion: \"1.2.3\"\n"
	values := "image:\n  repository: example.org/releases/gardener-extension-backup-admission\n  tag: \"1.2.3\"\n"
	image := AdmissionRuntimeChart.image(r)
	if err := AdmissionRuntimeChart.check(r, []byte(chartYAML), []byte(values), image); err != nil {
		t.Fatalf("the release's own chart: %v", err)
	}
	for _, c := range []struct{ name, chartYAML, values, want string }{
		{"another chart", strings.Replace(chartYAML, "-runtime", "-application", 1), values, "Chart.yaml"},
		{"another version", strings.Replace(chartYAML, "version: 1.2.3", "version: 1.2.4", 1), values, "Chart.yaml"},
		{"another appVersion", strings.Replace(chartYAML, `appVersion: "1.2.3"`, `appVersion: "1.2.4"`, 1), values, "Chart.yaml"},
		{"another image tag", chartYAML, strings.Replace(values, `tag: "1.2.3"`, `tag: "1.2.4"`, 1), "image.tag"},
		{"a tag as a number", chartYAML, strings.Replace(values, `tag: "1.2.3"`, `tag: 1.2`, 1), "image.tag"},
		{"another repository", chartYAML, strings.Replace(values, "example.org", "example.com", 1), "image.repository"},
	} {
		if err := AdmissionRuntimeChart.check(r, []byte(c.chartYAML), []byte(c.values), image); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a refusal naming %s", c.name, err, c.want)
		}
	}
}
