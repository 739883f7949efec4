// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// panel is what the tests read of a dashboard panel: a graph's unit is its left y axis's format,
// a stat's or table's its fieldConfig's.
type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		Format       string `json:"format"`
		Instant      bool   `json:"instant"`
	} `json:"targets"`
	Yaxes []struct {
		Format string `json:"format"`
	} `json:"yaxes"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

func (p panel) unit() string {
	if p.Type == "graph" {
		if len(p.Yaxes) == 0 {
			return ""
		}
		return p.Yaxes[0].Format
	}
	return p.FieldConfig.Defaults.Unit
}

// queryUnits is the unit of what a query returns, by its form; the first match counts. Every
// query of the dashboard must match one, and its panel must show that unit.
var queryUnits = []struct {
	query *regexp.Regexp
	unit  string
}{
	{regexp.MustCompile(`rate\(gardener_backup_\w*bytes\w*_total\b`), "Bps"},                                        // bytes per second
	{regexp.MustCompile(`^histogram_quantile\(0\.\d+, .*_seconds_bucket\b`), "s"},                                   // a duration
	{regexp.MustCompile(`time\(\) - .*\w+_timestamp_seconds\b`), "s"},                                               // an age
	{regexp.MustCompile(`^topk\(\d+, max by \([^)]*\) \(gardener_backup_entry_copy_lag_seconds\{`), "s"},            // the copy's lag, an age
	{regexp.MustCompile(`^sum(?: by \([^)]*\))? ?\(rate\(gardener_backup_cloud_requests_total\b`), "reqps"},         // requests per second
	{regexp.MustCompile(`^sum(?: by \([^)]*\))? ?\(rate\(`), "ops"},                                                 // events per second
	{regexp.MustCompile(`^(count|sum)(?: by \([^)]*\))? ?\(`), "short"},                                             // a count
	{regexp.MustCompile(`^topk\(\d+, (count|sum) `), "short"},                                                       // the largest counts
	{regexp.MustCompile(`^topk\(\d+, max by \(kind, name\) \(gardener_backup_rehearsal_`), "none"},                  // a verdict (mapped to text)
	{regexp.MustCompile(`^(min|max) by \([^)]*\) \(gardener_backup_entry_credentials_(headroom|limit)\{`), "short"}, // principals
	{regexp.MustCompile(`^max by \([^)]*\) \(gardener_backup_bucket_available\{`), "none"},                          // 0 or 1
}

func queryUnit(expr string) string {
	for _, q := range queryUnits {
		if q.query.MatchString(expr) {
			return q.unit
		}
	}
	return ""
}

// perObject are the labels of which a seed has one value per shoot (or per deletion).
var perObject = []string{"entry", "name"}

// outerBy is the first by clause of an expression: its outermost aggregation's where the
// expression starts with one (checkPanel requires that of time series).
var outerBy = regexp.MustCompile(`^(?:time\(\) - )?(?:sum|max|min|count|avg|histogram_quantile\(0\.\d+, sum) by \(([^)]*)\)`)

// reporter is what checkPanel reports to: a *testing.T, or a recorder in the test of the check.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder counts what a check reports.
type recorder struct{ errors int }

func (*recorder) Helper()                 {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }

// checkPanel checks that the panel shows its queries' unit, that a time series panel draws
// no line per entry (or per deleted object), and that a table lists a bounded number of rows.
func checkPanel(t reporter, p panel) {
	t.Helper()
	for _, target := range p.Targets {
		want := queryUnit(target.Expr)
		if want == "" {
			t.Errorf("panel %q: the unit of %s is not in queryUnits", p.Title, target.Expr)
		} else if got := p.unit(); got != want {
			t.Errorf("panel %q shows %q; its query %s returns %q", p.Title, got, target.Expr, want)
		}
	}
	switch p.Type {
	case "graph":
		for _, target := range p.Targets {
			if strings.Contains(target.Expr, "topk") || strings.Contains(target.Expr, "bottomk") {
				t.Errorf("panel %q: topk in a time series draws a changing set of lines: %s", p.Title, target.Expr)
			}
			by := outerBy.FindStringSubmatch(target.Expr)
			if by == nil && !strings.HasPrefix(target.Expr, "sum(") && !strings.HasPrefix(target.Expr, "count(") {
				t.Errorf("panel %q: a time series that does not aggregate draws one line per series: %s", p.Title, target.Expr)
				continue
			}
			for _, l := range perObject {
				if by != nil && slices.Contains(strings.Fields(strings.ReplaceAll(by[1], ",", " ")), l) {
					t.Errorf("panel %q draws one line per %s: %s", p.Title, l, target.Expr)
				}
				if strings.Contains(target.LegendFormat, "{{"+l+"}}") {
					t.Errorf("panel %q: legend %q names a %s", p.Title, target.LegendFormat, l)
				}
			}
		}
	case "table":
		for _, target := range p.Targets {
			if !target.Instant || target.Format != "table" || !strings.HasPrefix(target.Expr, "topk(") {
				t.Errorf("panel %q: a table's query must be an instant topk in table format: %+v", p.Title, target)
			}
		}
	case "stat":
		for _, target := range p.Targets {
			if !target.Instant {
				t.Errorf("panel %q: a stat's query must be instant", p.Title)
			}
		}
	default:
		t.Errorf("panel %q of type %q: want graph, stat or table", p.Title, p.Type)
	}
}

// TestCheckPanelFindsWrongUnitsAndPerEntryLines: the dashboard's checks fail on what issue 46
// found (a panel plotting bytes per second on a seconds axis, one line per entry).
func TestCheckPanelFindsWrongUnitsAndPerEntryLines(t *testing.T) {
	bad := []panel{
		{Type: "graph", Title: "bytes on seconds", Targets: targets(`sum(rate(gardener_backup_entry_drill_bytes_read_total{namespace="$namespace"}[$__rate_interval]))`, "")},
		{Type: "graph", Title: "per entry", Targets: targets(`max by (entry) (gardener_backup_entry_backups_fresh{namespace="$namespace"})`, "{{entry}}")},
		{Type: "graph", Title: "raw", Targets: targets(`gardener_backup_entry_backups_fresh{namespace="$namespace"}`, "")},
		{Type: "table", Title: "unbounded table", Targets: targets(`max by (entry) (gardener_backup_entry_backups_fresh{namespace="$namespace"}) == 0`, "")},
	}
	bad[0].Yaxes = []struct {
		Format string `json:"format"`
	}{{Format: "s"}}
	for _, p := range bad {
		r := &recorder{}
		checkPanel(r, p)
		if r.errors == 0 {
			t.Errorf("checkPanel passes panel %q", p.Title)
		}
	}
}

func targets(expr, legend string) []struct {
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	Format       string `json:"format"`
	Instant      bool   `json:"instant"`
} {
	return []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		Format       string `json:"format"`
		Instant      bool   `json:"instant"`
	}{{Expr: expr, LegendFormat: legend}}
}
