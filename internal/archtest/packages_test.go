package archtest

import (
	"go/ast"
	"go/parser"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goFile is one Go file of the module as the tests below see it.
type goFile struct {
	pkg     string // directory relative to the module root
	name    string // package clause
	test    bool   // a _test.go file
	doc     string // package doc comment, "" when none
	imports []string
}

// files parses the package clause, doc comment and imports of every Go file
// of the module, test files included.
func files(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	walkGoFiles(t, parser.ImportsOnly, true, func(pkg string, test bool, f *ast.File) {
		g := goFile{pkg: pkg, name: f.Name.Name, test: test}
		if f.Doc != nil {
			g.doc = f.Doc.Text()
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			g.imports = append(g.imports, strings.TrimPrefix(p, module+"/"))
		}
		out = append(out, g)
	})
	return out
}

// TestEveryPackageSaysWhatItIsFor: each package under internal/ and cmd/
// has a doc comment, "Package x ..." (a command's "Command x ..."), that is
// more than a restated name.
func TestEveryPackageSaysWhatItIsFor(t *testing.T) {
	t.Parallel()
	docs := map[string]string{}
	names := map[string]string{}
	for _, f := range files(t) {
		if f.test || !(under(f.pkg, "internal") || under(f.pkg, "cmd")) {
			continue
		}
		names[f.pkg] = f.name
		if f.doc != "" {
			docs[f.pkg] += f.doc
		}
	}
	pkgs := make([]string, 0, len(names))
	for p := range names {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		want := "Package " + names[p] + " "
		if names[p] == "main" {
			want = "Command " + filepath.Base(p) + " "
		}
		doc := docs[p]
		switch {
		case doc == "":
			t.Errorf("%s has no package doc comment; start one with %q and say what the package is for", p, want)
		case !strings.HasPrefix(doc, want):
			t.Errorf("%s: the package doc starts %q; want %q", p, strings.SplitN(doc, "\n", 2)[0], want)
		case len(strings.Fields(doc)) < 6:
			t.Errorf("%s: the package doc %q does not say what the package is for", p, strings.TrimSpace(doc))
		}
	}
}

// TestOnlyTheCommandImportsDaemonAndCLI: the daemon and the command line
// are the top of the graph; only cmd/neuraphage builds on them (and each
// package's own tests).
func TestOnlyTheCommandImportsDaemonAndCLI(t *testing.T) {
	t.Parallel()
	for _, f := range files(t) {
		for _, imp := range f.imports {
			if imp != "internal/daemon" && imp != "internal/cli" {
				continue
			}
			if f.pkg == "cmd/neuraphage" || (f.test && f.pkg == imp) {
				continue
			}
			t.Errorf("%s imports %s; only cmd/neuraphage may", f.pkg, imp)
		}
	}
}

// TestOnlyTestsImportTestkit: testkit and the engines' enginetest are for
// tests; the code the daemon runs never depends on them.
func TestOnlyTestsImportTestkit(t *testing.T) {
	t.Parallel()
	for _, f := range files(t) {
		for _, imp := range f.imports {
			for _, kit := range []string{"internal/testkit", "internal/engine/enginetest"} {
				if under(imp, kit) && !f.test && !under(f.pkg, kit) {
					t.Errorf("%s imports %s from non-test code; it is for tests only", f.pkg, imp)
				}
			}
		}
	}
}
