// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts_test

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

const monitoringNamespace = "extension-backup-monitoring"

// installMonitoringCRDs installs prometheus-operator's ServiceMonitor and PrometheusRule CRDs, as
// gardener ships them for seeds, so that the API server validates the chart's objects of them.
var installMonitoringCRDs = sync.OnceValue(func() error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/gardener").Output()
	if err != nil {
		return err
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "example", "seed-crds")
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{
		filepath.Join(dir, "10-crd-monitoring.coreos.com_servicemonitors.yaml"),
		filepath.Join(dir, "10-crd-monitoring.coreos.com_prometheusrules.yaml"),
	}})
	if err != nil {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": monitoringNamespace}}}
	return k8s.Create(context.Background(), ns)
})

// knownMetrics are the metrics the extension serves: its own, described by pkg/metrics (histograms
// also as _bucket, _sum and _count), and those of controller-runtime the chart may use.
func knownMetrics() map[string]bool {
	known := map[string]bool{
		"controller_runtime_reconcile_total": true, "controller_runtime_reconcile_errors_total": true,
		"controller_runtime_reconcile_time_seconds_bucket": true, "workqueue_depth": true,
		// The rehearsal's (metrics.Rehearsal*, rehearse43), which the dashboard shows in a
		// rehearsal release.
		"gardener_backup_rehearsal_adoptable": true, "gardener_backup_rehearsal_cannot_tell": true,
		"gardener_backup_rehearsal_planned_changes": true, "gardener_backup_rehearsal_last_run_timestamp_seconds": true,
		"gardener_backup_rehearsal_backups_restorable": true,
	}
	ch := make(chan *prometheus.Desc, 100)
	for _, c := range []prometheus.Collector{
		metrics.Reconciles, metrics.OperationFailingSince, metrics.CloudRequests, metrics.CloudRequestDuration, metrics.DeletedObjects, metrics.DeferredObjects,
		metrics.DeletionRemaining, metrics.DeletionStarted, metrics.BucketAvailable, metrics.ProbeDuration,
		metrics.CopyBucketAvailable,
		metrics.LatestSnapshot, metrics.EntryObjects, metrics.EntryBytes, metrics.BackupsFresh, metrics.InventoryDuration, metrics.InventoryPages,
		metrics.Restorable, metrics.DrillTime, metrics.DrillRevision, metrics.DrillBytes, metrics.DrillDuration, metrics.DrillBytesTotal,
		metrics.EntryIsolation, metrics.EntryCredentialsHeadroom, metrics.EntryCredentialsHeadroomUnreadable, metrics.EntryCredentialsLimit,
		metrics.EntryCopyLag, metrics.EntryCopyRPO, metrics.EntryCopyBytes, metrics.EntryCopyObjects, metrics.EntryCopyFailures,
	} {
		c.Describe(ch)
	}
	close(ch)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		name := fqName.FindStringSubmatch(d.String())[1]
		known[name] = true
		if strings.HasSuffix(name, "_seconds") {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				known[name+s] = true
			}
		}
	}
	return known
}

var metricName = regexp.MustCompile(`\b(gardener_backup|controller_runtime|workqueue)_[a-zA-Z0-9_]+`)

// checkExpr fails unless expr's brackets balance outside quoted strings and it queries at least
// one metric, all of them known. (The PromQL parser is not in this module's dependencies.)
func checkExpr(t *testing.T, where, expr string, known map[string]bool) {
	t.Helper()
	var stack []rune
	closing := map[rune]rune{')': '(', '}': '{', ']': '['}
	inString := false
	for _, r := range expr {
		switch {
		case r == '"':
			inString = !inString
		case inString:
		case r == '(' || r == '{' || r == '[':
			stack = append(stack, r)
		case closing[r] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != closing[r] {
				t.Errorf("%s: unbalanced %q in %s", where, r, expr)
				return
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inString || len(stack) > 0 {
		t.Errorf("%s: unclosed string or brackets %q in %s", where, string(stack), expr)
	}
	names := metricName.FindAllString(expr, -1)
	if len(names) == 0 {
		t.Errorf("%s: no metric of the extension in %s", where, expr)
	}
	for _, n := range names {
		if !known[n] {
			t.Errorf("%s: %s is not a metric the extension serves", where, n)
		}
	}
}

func TestMonitoring(t *testing.T) {
	if err := installMonitoringCRDs(); err != nil {
		t.Fatal(err)
	}
	known := knownMetrics()
	on := map[string]any{"enabled": true}
	cases := []struct {
		name   string
		values map[string]any
		want   []string // the monitoring kinds rendered, sorted
	}{
		{"defaults", nil, nil},
		{"service monitor", map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "interval": "30s"}}}, []string{"ServiceMonitor"}},
		{"prometheus rule", map[string]any{"monitoring": map[string]any{"prometheusRule": on}}, []string{"PrometheusRule"}},
		{"prometheus rule, own runbook", map[string]any{"monitoring": map[string]any{"prometheusRule": on, "runbookBaseURL": "https://runbooks.example/backup.html"}}, []string{"PrometheusRule"}},
		{"dashboard", map[string]any{"monitoring": map[string]any{"dashboard": on}}, []string{"ConfigMap"}},
		{"all", map[string]any{"provider": "gcp", "monitoring": map[string]any{"serviceMonitor": on, "prometheusRule": on, "dashboard": on}}, []string{"ConfigMap", "PrometheusRule", "ServiceMonitor"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := charts.Render(monitoringNamespace, c.values)
			if err != nil {
				t.Fatal(err)
			}
			provider, _ := c.values["provider"].(string)
			if provider == "" {
				provider = "aws"
			}
			// Each metrics Service and the Deployment whose pods it serves: the controllers'
			// and, where drills run, the restore drills'.
			name := "gardener-extension-backup-" + provider
			services := map[string]*unstructured.Unstructured{}
			deployments := map[string]*unstructured.Unstructured{}
			var got []string
			for _, o := range objs {
				switch o.GetKind() {
				case "Service":
					if strings.HasSuffix(o.GetName(), "-metrics") {
						services[strings.TrimSuffix(o.GetName(), "-metrics")] = o
					}
				case "Deployment":
					deployments[o.GetName()] = o
				case "ServiceMonitor", "PrometheusRule", "ConfigMap":
					got = append(got, o.GetKind())
					if err := k8s.Create(context.Background(), o, client.DryRunAll); err != nil {
						t.Errorf("%s %s is refused by the API server: %v", o.GetKind(), o.GetName(), err)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("monitoring objects %v; want %v", got, c.want)
			}
			for _, d := range []string{name, name + "-restore-drill"} {
				if deployments[d] == nil {
					t.Fatalf("no Deployment %s", d)
				}
				checkMetricsService(t, services[d], deployments[d])
			}
			if len(services) != 2 {
				t.Errorf("metrics Services %v; want the controllers' and the restore drills'", slices.Collect(maps.Keys(services)))
			}
			for _, o := range objs {
				switch o.GetKind() {
				case "ServiceMonitor":
					checkServiceMonitor(t, o, objs, slices.Collect(maps.Values(services)))
				case "PrometheusRule":
					runbook := defaultRunbook
					if m, ok := c.values["monitoring"].(map[string]any); ok && m["runbookBaseURL"] != nil {
						runbook = m["runbookBaseURL"].(string)
					}
					checkPrometheusRule(t, o, known, runbook)
				case "ConfigMap":
					checkDashboard(t, o, provider, known)
				}
			}
		})
	}
}

// checkMetricsService checks that the metrics Service selects the controllers' pods and forwards
// to their metrics port.
func checkMetricsService(t *testing.T, service, deployment *unstructured.Unstructured) {
	t.Helper()
	if service == nil {
		t.Fatal("no metrics Service next to the controllers' Deployment")
	}
	selector, _, _ := unstructured.NestedStringMap(service.Object, "spec", "selector")
	podLabels, _, _ := unstructured.NestedStringMap(deployment.Object, "spec", "template", "metadata", "labels")
	if len(selector) == 0 || !isSubset(selector, podLabels) {
		t.Errorf("Service selector %v does not select the pods' labels %v", selector, podLabels)
	}
	ports, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
	port := ports[0].(map[string]any)
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	var containerPorts []string
	for _, p := range containers[0].(map[string]any)["ports"].([]any) {
		containerPorts = append(containerPorts, p.(map[string]any)["name"].(string))
	}
	if port["name"] != "metrics" || !slices.Contains(containerPorts, port["targetPort"].(string)) {
		t.Errorf("Service port %v is not named metrics or targets none of the container's ports %v", port, containerPorts)
	}
}

// checkServiceMonitor checks that the ServiceMonitor scrapes the metrics port of every metrics
// Service and selects no other Service of the release.
func checkServiceMonitor(t *testing.T, sm *unstructured.Unstructured, objs, metrics []*unstructured.Unstructured) {
	t.Helper()
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetLabels()["prometheus"] != "seed" {
		t.Errorf("ServiceMonitor %s, labels %v; want monitoring.coreos.com/v1 and prometheus: seed", sm.GetAPIVersion(), sm.GetLabels())
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	for _, service := range metrics {
		if len(selector) == 0 || !isSubset(selector, service.GetLabels()) {
			t.Errorf("ServiceMonitor selector %v does not select the metrics Service %s (labels %v)", selector, service.GetName(), service.GetLabels())
		}
		if sm.GetNamespace() != service.GetNamespace() {
			t.Errorf("ServiceMonitor in %s, the Service %s in %s", sm.GetNamespace(), service.GetName(), service.GetNamespace())
		}
		ports, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
		if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != ports[0].(map[string]any)["name"] {
			t.Errorf("ServiceMonitor endpoints %v do not scrape the port %v of Service %s", endpoints, ports, service.GetName())
		}
	}
	for _, o := range objs {
		if o.GetKind() == "Service" && !slices.Contains(metrics, o) && isSubset(selector, o.GetLabels()) {
			t.Errorf("ServiceMonitor selector %v also selects Service %s, which serves no metrics", selector, o.GetName())
		}
	}
}

// defaultRunbook is monitoring.runbookBaseURL's default.
const defaultRunbook = "https://github.com/gardener-extension-backup/gardener-extension-backup/blob/main/docs/runbook.md"

// alertNames are the chart's alerts; docs/runbook.md has a section of each name.
var alertNames = []string{
	"BackupBucketUnavailable", "BackupCopyBucketUnavailable", "BackupCopyLagging", "BackupCopyNotRestorable", "BackupEntryDeletionStuck", "BackupNotRestorable", "BackupReconcileFailing",
	"BackupsStale", "CloudThrottlingSustained", "EntryCredentialsHeadroomLow", "EntryCredentialsHeadroomUnreadable",
}

// byClause finds the label lists of by and on clauses.
var byClause = regexp.MustCompile(`\b(by|on)\s*\(([^)]*)\)`)

func checkPrometheusRule(t *testing.T, rule *unstructured.Unstructured, known map[string]bool, runbook string) {
	t.Helper()
	if rule.GetAPIVersion() != "monitoring.coreos.com/v1" || rule.GetLabels()["prometheus"] != "seed" {
		t.Errorf("PrometheusRule %s, labels %v; want monitoring.coreos.com/v1 and prometheus: seed", rule.GetAPIVersion(), rule.GetLabels())
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alerts []string
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			name, _ := r["alert"].(string)
			alerts = append(alerts, name)
			expr, _ := r["expr"].(string)
			checkExpr(t, name, expr, known)
			if !strings.Contains(expr, `namespace="`+monitoringNamespace+`"`) || strings.Contains(expr, "__NAMESPACE__") {
				t.Errorf("%s: expression not limited to the release's namespace: %s", name, expr)
			}
			labels, _ := r["labels"].(map[string]any)
			if s := labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %v", name, s)
			}
			annotations, _ := r["annotations"].(map[string]any)
			summary, _ := annotations["summary"].(string)
			description, _ := annotations["description"].(string)
			if !strings.Contains(summary, "{{ $labels.") || description == "" {
				t.Errorf("%s: summary %q names no resource or no description", name, summary)
			}
			if got, want := annotations["runbook_url"], runbook+"#"+strings.ToLower(name); got != want {
				t.Errorf("%s: runbook_url %v; want %s (the runbook's section of the alert)", name, got, want)
			}
			if name == "BackupsStale" {
				checkBackupsStale(t, expr)
			}
		}
	}
	slices.Sort(alerts)
	if !slices.Equal(alerts, alertNames) {
		t.Errorf("alerts %v; want %v", alerts, alertNames)
	}
}

// checkBackupsStale checks that BackupsStale is one alert per entry with its bucket, held back
// while that bucket is unavailable (BackupBucketUnavailable's condition).
func checkBackupsStale(t *testing.T, expr string) {
	t.Helper()
	stale, inhibitor, ok := strings.Cut(expr, "unless on (bucket)")
	if !ok || !strings.Contains(inhibitor, "gardener_backup_bucket_available") || !strings.Contains(inhibitor, "== 0") {
		t.Errorf("BackupsStale is not held back while its bucket is unavailable (unless on (bucket) over gardener_backup_bucket_available == 0): %s", expr)
	}
	if !strings.Contains(stale, "gardener_backup_entry_backups_fresh") {
		t.Errorf("BackupsStale does not read gardener_backup_entry_backups_fresh before its unless: %s", expr)
	}
	for _, m := range byClause.FindAllStringSubmatch(expr, -1) {
		if !slices.Contains(strings.Fields(strings.ReplaceAll(m[2], ",", " ")), "bucket") {
			t.Errorf("BackupsStale: %s clause %q drops the bucket label", m[1], m[0])
		}
	}
	if !strings.Contains(stale, "by (bucket, entry)") {
		t.Errorf("BackupsStale is not by bucket and entry: %s", stale)
	}
}

func checkDashboard(t *testing.T, cm *unstructured.Unstructured, provider string, known map[string]bool) {
	t.Helper()
	if cm.GetNamespace() != "garden" || cm.GetLabels()["dashboard.monitoring.gardener.cloud/seed"] != "true" {
		t.Errorf("dashboard ConfigMap in %s with labels %v; want garden and dashboard.monitoring.gardener.cloud/seed: \"true\"", cm.GetNamespace(), cm.GetLabels())
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if len(data) != 1 {
		t.Fatalf("dashboard ConfigMap data has %d keys; want one JSON document", len(data))
	}
	for key, doc := range data {
		if !strings.HasSuffix(key, ".json") || strings.Contains(doc, "__PROVIDER__") || strings.Contains(doc, "__NAMESPACE__") {
			t.Errorf("dashboard %s is not a .json or has placeholders left", key)
		}
		var dashboard struct {
			UID        string  `json:"uid"`
			Panels     []panel `json:"panels"`
			Templating struct {
				List []struct {
					Name  string `json:"name"`
					Query string `json:"query"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal([]byte(doc), &dashboard); err != nil {
			t.Fatalf("dashboard %s: %v", key, err)
		}
		if !strings.HasSuffix(dashboard.UID, "-"+provider) {
			t.Errorf("dashboard uid %s is not the %s release's", dashboard.UID, provider)
		}
		if !slices.ContainsFunc(dashboard.Templating.List, func(v struct {
			Name  string `json:"name"`
			Query string `json:"query"`
		}) bool {
			return v.Name == "namespace" && v.Query == monitoringNamespace
		}) {
			t.Errorf("dashboard variable namespace is not the release's namespace: %+v", dashboard.Templating.List)
		}
		var titles []string
		for _, p := range dashboard.Panels {
			titles = append(titles, p.Title)
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no queries", p.Title)
			}
			for _, target := range p.Targets {
				checkExpr(t, "panel "+p.Title, target.Expr, known)
				if !strings.Contains(target.Expr, `namespace="$namespace"`) {
					t.Errorf("panel %q: query not limited to the release's namespace: %s", p.Title, target.Expr)
				}
			}
		}
		for _, want := range []string{
			"Failing reconciles", "Entries by BackupsFresh", "Entries by BackupsRestorable", "Deletions in progress",
			"Failing BackupBuckets and BackupEntries", "Entries with the oldest newest snapshot",
			"Bucket availability", "Stale entries by bucket", "Newest snapshot age, worst entry", "Cloud requests by code",
			"Cloud request latency p95", "Reconciles by result", "Deletion progress: remaining objects",
			"Deletion progress: deleted objects rate", "Inventory duration p95", "Restore drill read rate",
			"Entries by credential isolation", "Entry credentials headroom unreadable", "Rehearsal: verdicts",
		} {
			if !slices.Contains(titles, want) {
				t.Errorf("dashboard lacks panel %q (has %v)", want, titles)
			}
		}
		for _, p := range dashboard.Panels {
			checkPanel(t, p)
		}
	}
}

func isSubset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return true
}

func TestMonitoringValuesSchema(t *testing.T) {
	cases := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown monitoring key", map[string]any{"monitoring": map[string]any{"grafana": map[string]any{"enabled": true}}}, "grafana"},
		{"misspelt enabled", map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enable": true}}}, "enable"},
		{"label value not a string", map[string]any{"monitoring": map[string]any{"dashboard": map[string]any{"labels": map[string]any{"sidecar": true}}}}, "sidecar"},
		{"interval not a duration", map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"interval": "often"}}}, "interval"},
		{"runbook with an anchor", map[string]any{"monitoring": map[string]any{"runbookBaseURL": "https://runbooks.example/backup.md#top"}}, "runbookBaseURL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := charts.Render(monitoringNamespace, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("render: %v; want a schema error naming %s", err, c.want)
			}
		})
	}
}

func TestMonitoringLabelsAreReplaceable(t *testing.T) {
	// For another Prometheus: its selector label added, the seed's default dropped with null.
	objs, err := charts.Render(monitoringNamespace, map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{
		"enabled": true, "labels": map[string]any{"prometheus": nil, "release": "kube-prometheus"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			if l := o.GetLabels(); l["release"] != "kube-prometheus" || l["prometheus"] != "" {
				t.Errorf("ServiceMonitor labels %v; want release: kube-prometheus and no prometheus label", l)
			}
			return
		}
	}
	t.Fatal("no ServiceMonitor rendered")
}
