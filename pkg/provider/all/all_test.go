// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package all_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
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
		if missing := servesAPI(f, module+"/pkg/apis/"+typ); len(missing) > 0 {
			t.Errorf("provider %q: %s: type Provider does not serve the listed API (%s): %v", typ, file, module+"/pkg/apis/"+typ, missing)
		}
	}
}

// servesAPI lists what f lacks of a type Provider whose provider.Cloud methods are the listed
// API's functions: Type returning <alias>.Type, ValidateBucketName calling
// <alias>.ValidateBucketName and Decode calling <alias>.DecodeBackupBucketConfig, where alias is
// the import of apiPath (config.NewAPI builds the listed API of the same three).
func servesAPI(f *ast.File, apiPath string) []string {
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
		return []string{"no import of " + apiPath}
	}
	want := map[string]string{"Type": "Type", "ValidateBucketName": "ValidateBucketName", "Decode": "DecodeBackupBucketConfig"}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || fn.Body == nil || receiverName(fn.Recv.List[0].Type) != "Provider" {
			continue
		}
		uses, ok := want[fn.Name.Name]
		if !ok {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == alias && sel.Sel.Name == uses {
					delete(want, fn.Name.Name)
				}
			}
			return true
		})
	}
	var missing []string
	for method, uses := range want {
		missing = append(missing, fmt.Sprintf("Provider.%s using %s.%s", method, alias, uses))
	}
	slices.Sort(missing)
	return missing
}

// receiverName is the type name of a method's receiver (Provider or *Provider).
func receiverName(recv ast.Expr) string {
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
