// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package layers

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/gardener-extension-backup/gardener-extension-backup/"

// layer is a set of the module's packages: a pattern is a package path relative to the module,
// or a subtree ("pkg/provider/..."). A package belongs to the layer that names it, else to the
// layer of the deepest subtree it is in, so that a named package stands apart from the subtree
// around it.
type layer struct {
	name     string
	patterns []string
	// beside allows imports between the layer's own packages (helpers beside each other by
	// concern); without it the layer's packages are siblings that never import each other.
	beside bool
}

// order is docs/dev/architecture.md's picture, top to bottom: a package imports only packages of
// lower layers (and of its own if the layer allows it). Its production imports are checked;
// tests may import what they need (stand-ins in test/, the conformance harness, fakes).
var order = []layer{
	{name: "binaries, tests and tools", patterns: []string{"cmd/...", "test/...", "hack/...", "charts/..."}, beside: true},
	{name: "the command", patterns: []string{"pkg/app"}},
	{name: "the rehearsal (the controllers' reads, nothing written)", patterns: []string{"pkg/controller/rehearsal"}},
	{name: "the controllers and webhooks", patterns: []string{"pkg/controller/backupbucket", "pkg/controller/backupentry", "pkg/controller/entryinventory", "pkg/controller/entrycopy", "pkg/controller/restoredrill", "pkg/admission", "pkg/etcdendpoint"}},
	{name: "what the controllers share", patterns: []string{"pkg/controller/..."}, beside: true},
	{name: "the stores a copy of another type is written with", patterns: []string{"pkg/provider/stores"}},
	{name: "the providers", patterns: []string{"pkg/provider/..."}},
	{name: "the provider seam and its transports", patterns: []string{"pkg/provider", "pkg/provider/httpclient"}},
	{name: "the providers' APIs", patterns: []string{"pkg/apis/..."}},
	{name: "the decoded providerConfig", patterns: []string{"pkg/apis/config"}},
	{name: "the copy's declaration", patterns: []string{"pkg/apis/copystore"}},
	{name: "what the APIs share", patterns: []string{"pkg/apis/credentials", "pkg/apis/freshness", "pkg/apis/immutability", "pkg/apis/decode", "pkg/apis/validation"}},
	{name: "the copy between two stores", patterns: []string{"pkg/replication"}},
	{name: "readers of the store and the harness", patterns: []string{"pkg/drill", "pkg/inventory", "pkg/objectstore/conformance", "pkg/objectstore/memstore"}},
	{name: "metrics", patterns: []string{"pkg/metrics"}},
	{name: "the store seam", patterns: []string{"pkg/objectstore", "pkg/snapshotname"}},
}

// layerOf is the index in layers of pkg (relative to the module), -1 if no pattern matches.
func layerOf(layers []layer, pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.patterns {
			score := -1
			if tree, isTree := strings.CutSuffix(p, "/..."); !isTree && pkg == p {
				score = 1 << 16 // named
			} else if isTree && (pkg == tree || strings.HasPrefix(pkg, tree+"/")) {
				score = len(tree)
			}
			if score > bestLen {
				best, bestLen = i, score
			}
		}
	}
	return best
}

// violation says why pkg may not import imp (both relative to the module), "" if it may.
func violation(layers []layer, pkg, imp string) string {
	from, to := layerOf(layers, pkg), layerOf(layers, imp)
	switch {
	case from < 0:
		return fmt.Sprintf("%s is in no layer: add it to order (docs/dev/architecture.md's picture)", pkg)
	case to < 0:
		return fmt.Sprintf("%s imports %s, which is in no layer: add it to order", pkg, imp)
	case to < from:
		return fmt.Sprintf("%s (%s) imports %s (%s): an import points up", pkg, layers[from].name, imp, layers[to].name)
	case to == from && !layers[from].beside:
		return fmt.Sprintf("%s imports %s: siblings among %s do not import each other", pkg, imp, layers[from].name)
	}
	return ""
}

// TestViolation: the rules refuse what they are meant to refuse.
func TestViolation(t *testing.T) {
	cases := []struct {
		pkg, imp string
		want     string // a part of the violation, "" for none
	}{
		{pkg: "pkg/controller/backupentry", imp: "pkg/controller/entryinfo"},
		{pkg: "pkg/controller/restoredrill", imp: "pkg/controller/backupentry", want: "siblings"},
		{pkg: "pkg/controller/entryinventory", imp: "pkg/controller/backupentry", want: "siblings"},
		{pkg: "pkg/metrics", imp: "pkg/controller/lasterror", want: "points up"},
		{pkg: "pkg/objectstore/conformance", imp: "pkg/provider", want: "points up"},
		{pkg: "pkg/provider/aws", imp: "pkg/provider/httpclient"},
		{pkg: "pkg/provider/aws", imp: "pkg/provider"},
		{pkg: "pkg/provider", imp: "pkg/provider/all", want: "points up"},
		{pkg: "pkg/provider/httpclient", imp: "pkg/provider/aws", want: "points up"},
		{pkg: "pkg/provider/aws", imp: "pkg/provider/gcp", want: "siblings"},
		{pkg: "pkg/apis/aws", imp: "pkg/apis/config"},
		{pkg: "pkg/apis/config", imp: "pkg/apis/aws", want: "points up"},
		{pkg: "pkg/controller/periodic", imp: "pkg/controller/options"},
		{pkg: "test/demo", imp: "test/stack"},
		{pkg: "pkg/objectstore", imp: "test/stack", want: "points up"},
		{pkg: "pkg/newthing", imp: "pkg/objectstore", want: "in no layer"},
	}
	for _, c := range cases {
		got := violation(order, c.pkg, c.imp)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s -> %s: %q; want %q", c.pkg, c.imp, got, c.want)
		}
	}
}

// TestNoImportPointsUp lists every package of the module (go list) and checks each of its
// imports of the module's packages against order.
func TestNoImportPointsUp(t *testing.T) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	list := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	list.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			t.Fatalf("go list: %s is not the module's", fields[0])
		}
		packages++
		if layerOf(order, pkg) < 0 {
			t.Errorf("%s", violation(order, pkg, ""))
			continue
		}
		for _, imp := range fields[1:] {
			imp, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if v := violation(order, pkg, imp); v != "" {
				t.Error(v)
			}
		}
	}
	if packages < 50 {
		t.Fatalf("go list found %d packages; want the whole module", packages)
	}
}
