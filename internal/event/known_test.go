package event

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKindsListsEveryKind parses the package's sources and checks that every
// exported Kind constant is in Kinds, so that `events --kind` can reject a
// kind no build logs.
func TestKindsListsEveryKind(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	known := Kinds()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				return true
			}
			for i, nm := range vs.Names {
				if !nm.IsExported() {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				found++
				k := Kind(strings.Trim(lit.Value, `"`))
				if !slices.Contains(known, k) {
					t.Errorf("%s (%q) is not in Kinds()", nm.Name, k)
				}
			}
			return true
		})
	}
	if found != len(known) {
		t.Errorf("the sources declare %d kinds, Kinds() has %d", found, len(known))
	}
}

func TestKnownFilter(t *testing.T) {
	for f, want := range map[string]bool{
		"task": true, "task.status": true, "agent.text.delta": true, "merge": true,
		"bogus": false, "task.stat": false, "": false,
	} {
		if got := KnownFilter(f); got != want {
			t.Errorf("KnownFilter(%q) = %v, want %v", f, got, want)
		}
	}
}
