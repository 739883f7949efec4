package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// module is this repository's module path.
const module = "github.com/gardener-extension-backup/gardener-extension-backup"

// TestEveryListedTypeHasItsProvider: the list and the provider packages cannot drift apart; a
// provider serves the very API the list (and so the webhook) validates with. It reads each
// provider's provider.go rather than importing the packages, so that all.APIs stays the one list
// (the binary's main, which the pieces test requires, compiles provider.Register(&<type>.Provider{})
// against provider.Cloud).
func TestEveryListedTypeHasItsProvider(t *testing.T) {
	for typ, api := range all.APIs() {
		if typ != api.Type() {
			t.Errorf("API %T listed as %q serves type %q", api, typ, api.Type())
		}
		if _, err := api.DecodeBucketConfig(nil); err != nil {
			t.Errorf("provider %q: decoding the defaults: %v", typ, err)
		}
		file := filepath.Join(repo, "pkg", "provider", typ, "provider.go")
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("type %q is listed but has no provider: %v", typ, err)
			continue
		}
		if !embedsAPI(f, module+"/pkg/apis/"+typ) {
			t.Errorf("provider %q: %s declares no type Provider embedding the listed API (%s.API)", typ, file, module+"/pkg/apis/"+typ)
		}
	}
}

// embedsAPI says whether f declares `type Provider struct{ <alias>.API ... }` where alias is the
// import of apiPath.
func embedsAPI(f *ast.File, apiPath string) bool {
	alias := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == apiPath {
			alias = filepath.Base(apiPath)
			if imp.Name != nil {
				alias = imp.Name.Name
			}
		}
	}
	if alias == "" {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Provider" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, field := range st.Fields.List {
			sel, ok := field.Type.(*ast.SelectorExpr)
			if !ok || len(field.Names) != 0 {
				continue
			}
			if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == alias && sel.Sel.Name == "API" {
				found = true
			}
		}
		return false
	})
	return found
}
