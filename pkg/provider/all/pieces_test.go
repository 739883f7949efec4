// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package all_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/all"
)

// repo is the repository's root, from this package's directory.
const repo = "../../.."

// piece is one file every registered provider must have, with what it must contain.
type piece struct {
	what     string
	path     string // with %s for the type
	contains string // with %s for the type; "" for existence only
}

// pieces are what one registration in all.APIs does not give a provider by itself: its binary,
// its example resources (the chart's examples test and the demo read them), its docs page (linked
// from the README), the conformance suite on its store, the controllers end to end on its store,
// and its test stand-in (test/standin), from which the demo, its tools and the consumer test with
// the real etcd-backup-restore come (TestEveryRegisteredProviderHasAStandIn checks it).
var pieces = []piece{
	{"the binary's main", "cmd/gardener-extension-backup-%s/main.go", "provider.Register("},
	{"the example BackupBucket", "example/%s/backupbucket.yaml", "type: %s"},
	{"the example BackupEntry", "example/%s/backupentry.yaml", "type: %s"},
	{"the example bucket secret", "example/%s/secret-backupbucket.yaml", ""},
	{"the example entry secret", "example/%s/secret-backupentry.yaml", ""},
	{"the generated registration (make examples)", "example/%s/controller-registration.yaml", ""},
	{"the docs page", "docs/%s.md", ""},
	{"the README's link to the docs page", "README.md", "docs/%s.md"},
	{"the conformance test", "pkg/provider/%s/conformance_test.go", "conformance.Run("},
	{"the streamed write a copy between two stores writes with", "pkg/provider/%s/store_stream.go", "objectstore.StreamWriter = (*store)(nil)"},
	{"the copy inside one store", "pkg/provider/%s/store_copy.go", "objectstore.ServerSideCopier = (*store)(nil)"},
	{"the store's snapshot rule, as etcd-backup-restore lists it (restore drills)", "pkg/provider/%s/snapshotrule.go", "etcd-backup-restore"},
	{"the controllers end to end on the store", "test/integration/%s/main_test.go", "framework.Start"},
	{"the test stand-in (the demo, its tools, the consumer test)", "test/standin/%s/standin.go", "standin.Register(standin.StandIn{"},
	{"the stand-in among every provider's (test/standin/all)", "test/standin/all/all.go", "/test/standin/%s\""},
	{"the demo command, linking only its stand-in (make demo PROVIDER=<type>)", "test/demo/demo-%s/main.go", "/test/standin/%s\""},
}

// TestEveryRegisteredProviderHasItsPieces fails when a provider listed in all.APIs lacks one of the
// pieces a registration cannot generate (docs/dev/adding-a-provider.md lists them).
func TestEveryRegisteredProviderHasItsPieces(t *testing.T) {
	for _, typ := range all.Types() {
		for _, p := range pieces {
			path := filepath.Join(repo, strings.ReplaceAll(p.path, "%s", typ))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("provider %q lacks %s: %v", typ, p.what, err)
				continue
			}
			// Whitespace as gofmt aligns it in a var block does not matter.
			if want := strings.ReplaceAll(p.contains, "%s", typ); want != "" && !strings.Contains(strings.Join(strings.Fields(string(data)), " "), want) {
				t.Errorf("provider %q: %s (%s) does not contain %q", typ, p.what, path, want)
			}
		}
	}
}

// TestEveryRegisteredProviderHasAStandIn fails when a provider listed in all.APIs has no stand-in
// in test/standin (registered through test/standin/all), or one that cannot run the demo and the
// consumer test (no start, no region, no etcd-backup keys, a tool hack/tools.sh does not build),
// and when a stand-in stands in for no listed provider.
func TestEveryRegisteredProviderHasAStandIn(t *testing.T) {
	tools, err := os.ReadFile(filepath.Join(repo, "hack", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range all.Types() {
		s, ok := standin.For(typ)
		if !ok {
			t.Errorf("provider %q has no stand-in in test/standin", typ)
			continue
		}
		if s.Start == nil || s.Region == "" || len(s.EtcdBackupKeys) == 0 {
			t.Errorf("provider %q: the stand-in lacks its start, region or etcd-backup keys: %+v", typ, s)
		}
		for _, tool := range s.Tools {
			if !strings.Contains(string(tools), "\n"+tool+"() {") {
				t.Errorf("provider %q: hack/tools.sh has no component %q", typ, tool)
			}
		}
		// make demo builds the tools while the demo compiles, so hack/tools.sh reads them from
		// the stand-in's source: that reading must be the registration's.
		out, err := exec.Command("bash", filepath.Join(repo, "hack", "tools.sh"), "demo-components", typ).Output()
		if err != nil {
			t.Errorf("provider %q: hack/tools.sh demo-components: %v", typ, err)
		} else if read := strings.Fields(string(out)); !slices.Equal(read, s.Tools) && len(read)+len(s.Tools) > 0 {
			t.Errorf("provider %q: hack/tools.sh reads the stand-in's tools as %q, the registration has %q", typ, read, s.Tools)
		}
	}
	for _, s := range standin.All() {
		if _, ok := all.APIs()[s.Type]; !ok {
			t.Errorf("stand-in %q stands in for no provider of all.APIs", s.Type)
		}
	}
}
