package all_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
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
// from the README), the consumer test with the real etcd-backup-restore, the conformance suite on
// its store, the controllers end to end on its store (the test stand-in), and the demo's store.
var pieces = []piece{
	{"the binary's main", "cmd/gardener-extension-backup-%s/main.go", "provider.Register("},
	{"the example BackupBucket", "example/%s/backupbucket.yaml", "type: %s"},
	{"the example BackupEntry", "example/%s/backupentry.yaml", "type: %s"},
	{"the example bucket secret", "example/%s/secret-backupbucket.yaml", ""},
	{"the example entry secret", "example/%s/secret-backupentry.yaml", ""},
	{"the generated registration (make examples)", "example/%s/controller-registration.yaml", ""},
	{"the docs page", "docs/%s.md", ""},
	{"the README's link to the docs page", "README.md", "docs/%s.md"},
	{"the consumer test (real etcd-backup-restore)", "test/integration/consumer/%s_test.go", "run(t, env"},
	{"the conformance test", "pkg/provider/%s/conformance_test.go", "conformance.Run("},
	{"the controllers end to end on the store (test stand-in)", "test/integration/%s/main_test.go", "framework.Start"},
	{"the demo's object store (make demo PROVIDER=<type>)", "test/demo/stores.go", `pkg/provider/%s"`},
	{"the demo's tools (hack/tools.sh demo <type>)", "hack/tools.sh", "%s)"},
}

// TestEveryRegisteredProviderHasItsPieces fails when a provider listed in all.APIs lacks one of the
// pieces a registration cannot generate (docs/adding-a-provider.md lists them).
func TestEveryRegisteredProviderHasItsPieces(t *testing.T) {
	for _, typ := range all.Types() {
		for _, p := range pieces {
			path := filepath.Join(repo, strings.ReplaceAll(p.path, "%s", typ))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("provider %q lacks %s: %v", typ, p.what, err)
				continue
			}
			if want := strings.ReplaceAll(p.contains, "%s", typ); want != "" && !strings.Contains(string(data), want) {
				t.Errorf("provider %q: %s (%s) does not contain %q", typ, p.what, path, want)
			}
		}
	}
}
