// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package docscheck

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

// The figures the docs state are written in digits directly before the noun: "8 alerts",
// "15 panels", "5 providers", and each such figure is the total (the chart's alerts, the
// dashboard's panels, the providers with a binary). A number word before one of these nouns
// ("four providers") is refused, so that no figure escapes the check; a part of a total is
// written otherwise ("aws and gcp", "the new alert").
var figure = regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\s+(alerts|panels|providers)\b`)

// docs returns README.md and every Markdown file under docs/, by path relative to root.
func docs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	read := func(rel string) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = string(b)
	}
	read("README.md")
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		read(filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// alerts counts the rules of the chart's PrometheusRule.
func alerts(t *testing.T) int {
	return len(regexp.MustCompile(`(?m)^\s*- alert:`).FindAllString(readFile(t, "charts/gardener-extension-backup/monitoring/alerts.yaml"), -1))
}

// panels counts the dashboard's panels, rows not counted, the panels inside rows counted.
func panels(t *testing.T) int {
	type panel struct {
		Type   string  `json:"type"`
		Panels []panel `json:"panels"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "charts/gardener-extension-backup/monitoring/dashboard.json")), &d); err != nil {
		t.Fatal(err)
	}
	var count func([]panel) int
	count = func(ps []panel) int {
		n := 0
		for _, p := range ps {
			if p.Type != "row" {
				n++
			}
			n += count(p.Panels)
		}
		return n
	}
	return count(d.Panels)
}

// providers counts the providers' binaries, cmd/gardener-extension-backup-<provider> (the
// admission webhook's binary is none).
func providers(t *testing.T) int {
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if name, ok := strings.CutPrefix(e.Name(), "gardener-extension-backup-"); ok && e.IsDir() && name != "admission" {
			n++
		}
	}
	return n
}

func TestFigures(t *testing.T) {
	want := map[string]int{"alerts": alerts(t), "panels": panels(t), "providers": providers(t)}
	for noun, n := range want {
		if n == 0 {
			t.Fatalf("no %s found in the code: the check cannot judge the docs", noun)
		}
	}
	for file, text := range docs(t) {
		for _, m := range figure.FindAllStringSubmatch(text, -1) {
			noun := strings.ToLower(m[2])
			if m[1][0] < '0' || m[1][0] > '9' {
				t.Errorf("%s: %q: write the figure in digits (%d %s), or say what part of them is meant without a number", file, m[0], want[noun], noun)
				continue
			}
			if m[1] != fmt.Sprint(want[noun]) {
				t.Errorf("%s: %q, but there are %d %s", file, m[0], want[noun], noun)
			}
		}
	}
}

// goMod returns the version go.mod (at rel) requires of module, or its go directive for "go".
func goMod(t *testing.T, rel, module string) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, rel), "\n") {
		f := strings.Fields(strings.TrimSpace(line))
		if module == "go" && len(f) == 2 && f[0] == "go" {
			return f[1]
		}
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
		if len(f) >= 3 && f[0] == "require" && f[1] == module {
			return f[2]
		}
	}
	t.Fatalf("%s requires no %s", rel, module)
	return ""
}

// tool returns the version hack/tools.sh pins of a tool: the default of its NAME=${NAME:-default}.
func tool(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `=\$\{` + name + `:-([^}]+)\}`).FindStringSubmatch(readFile(t, "hack/tools.sh"))
	if m == nil {
		t.Fatalf("hack/tools.sh sets no default of %s", name)
	}
	return m[1]
}

// version is a rule: a component named in the docs with a version, and the versions the code
// pins of it.
type version struct {
	name    string
	pattern *regexp.Regexp // its first group is the version, without a leading v
	pinned  func(t *testing.T) []string
}

func v(s string) string { return strings.TrimPrefix(s, "v") }

func versions() []version {
	incumbent := func(p string) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			return []string{v(goMod(t, "test/incumbent/"+p+"/go.mod", "github.com/gardener/gardener-extension-provider-"+p))}
		}
	}
	semver := `v?(\d+\.\d+\.\d+)\b`
	return []version{
		{"gardener (go.mod; the incumbents' builds in test/incumbent)", regexp.MustCompile(`\bgardener ` + semver), func(t *testing.T) []string {
			out := []string{v(goMod(t, "go.mod", "github.com/gardener/gardener"))}
			for _, p := range []string{"aws", "gcp"} {
				out = append(out, v(goMod(t, "test/incumbent/"+p+"/go.mod", "github.com/gardener/gardener")))
			}
			return out
		}},
		{"etcd-backup-restore (hack/tools.sh ETCDBR_VERSION, ETCDBR_PREVIOUS_VERSION)", regexp.MustCompile(`\betcd-backup-restore ` + semver), func(t *testing.T) []string {
			return []string{v(tool(t, "ETCDBR_VERSION")), v(tool(t, "ETCDBR_PREVIOUS_VERSION"))}
		}},
		{"etcd-druid api (go.mod)", regexp.MustCompile(`\betcd-druid(?:/api| api)? ` + semver), func(t *testing.T) []string {
			return []string{v(goMod(t, "go.mod", "github.com/gardener/etcd-druid/api"))}
		}},
		{"provider-aws (test/incumbent/aws)", regexp.MustCompile(`\bprovider-aws ` + semver), incumbent("aws")},
		{"provider-gcp (test/incumbent/gcp)", regexp.MustCompile(`\bprovider-gcp ` + semver), incumbent("gcp")},
		{"provider-azure (test/incumbent/azure)", regexp.MustCompile(`\bprovider-azure ` + semver), incumbent("azure")},
		{"provider-openstack (test/incumbent/openstack)", regexp.MustCompile(`\bprovider-openstack ` + semver), incumbent("openstack")},
		{"kube-apiserver (hack/tools.sh K8S_VERSION)", regexp.MustCompile(`\bkube-apiserver ` + semver), func(t *testing.T) []string {
			return []string{v(tool(t, "K8S_VERSION"))}
		}},
		{"etcd (hack/tools.sh ETCD_VERSION)", regexp.MustCompile(`\betcd ` + semver), func(t *testing.T) []string {
			return []string{v(tool(t, "ETCD_VERSION"))}
		}},
		{"fake-gcs-server (hack/tools.sh FAKE_GCS_VERSION)", regexp.MustCompile(`\bfake-gcs-server ` + semver), func(t *testing.T) []string {
			return []string{v(tool(t, "FAKE_GCS_VERSION"))}
		}},
		{"Azurite (hack/tools.sh AZURITE_VERSION)", regexp.MustCompile(`\bAzurite ` + semver), func(t *testing.T) []string {
			return []string{v(tool(t, "AZURITE_VERSION"))}
		}},
		{"Go (go.mod's go directive)", regexp.MustCompile(`\bGo (?:>= ?)?(\d+\.\d+(?:\.\d+)?)\b`), func(t *testing.T) []string {
			return []string{goMod(t, "go.mod", "go")}
		}},
		{"golang image (Dockerfile)", regexp.MustCompile(`\bgolang:(\d+\.\d+(?:\.\d+)?)\b`), func(t *testing.T) []string {
			m := regexp.MustCompile(`(?m)^FROM golang:(\S+)`).FindStringSubmatch(readFile(t, "Dockerfile"))
			if m == nil {
				t.Fatal("Dockerfile: no FROM golang:")
			}
			return []string{m[1]}
		}},
	}
}

func TestVersions(t *testing.T) {
	all := docs(t)
	for _, rule := range versions() {
		// The pins are read only for a component the docs name with a version: a file the
		// component is pinned in may go when the docs no longer name it.
		var pinned []string
		for file, text := range all {
			for _, m := range rule.pattern.FindAllStringSubmatch(text, -1) {
				if pinned == nil {
					pinned = rule.pinned(t)
				}
				if !slices.Contains(pinned, m[1]) {
					t.Errorf("%s: %q, but the version pinned of %s is %s", file, m[0], rule.name, strings.Join(pinned, " or "))
				}
			}
		}
	}
}

// fence is a fenced code block; code an inline code span: links in either are not links.
var (
	fence   = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\n]*$")
	code    = regexp.MustCompile("`[^`\n]*`")
	link    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	htmlID  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	scheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// slug is GitHub's anchor of a heading: lower case, every character but letters, digits, spaces,
// '-' and '_' dropped, spaces to '-'.
func slug(h string) string {
	h = strings.ToLower(h)
	var b strings.Builder
	for _, r := range h {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown text: its headings' (a repeated one gets -1, -2, ...)
// and explicit <a name|id>.
func anchors(text string) map[string]bool {
	text = fence.ReplaceAllString(text, "")
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, m := range htmlID.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

func TestLinks(t *testing.T) {
	all := docs(t)
	checked := 0
	for file, text := range all {
		prose := code.ReplaceAllString(fence.ReplaceAllString(text, ""), "")
		var targets []string
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refLink.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if scheme.MatchString(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			rel := file
			if path != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			info, err := os.Stat(filepath.Join(root, rel))
			if err != nil {
				t.Errorf("%s: link %q: no file %s", file, target, rel)
				continue
			}
			if anchor == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(rel, ".md") {
				t.Errorf("%s: link %q: an anchor into %s, which is no Markdown file", file, target, rel)
				continue
			}
			body, ok := all[rel]
			if !ok {
				body = readFile(t, rel)
			}
			if !anchors(body)[anchor] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", file, target, rel, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the check sees nothing")
	}
}
