package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkGoFiles parses every Go file of the module with mode (test files
// only when tests is set; testdata, hidden directories and files built
// only with the "tools" tag left out) and calls fn with the file's package
// directory relative to the module root, whether it is a test file, and
// the parsed file.
func walkGoFiles(t *testing.T, mode parser.Mode, tests bool, fn func(pkg string, test bool, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		test := strings.HasSuffix(path, "_test.go")
		if d.IsDir() || !strings.HasSuffix(path, ".go") || test && !tests {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode|parser.ParseComments)
		if err != nil {
			return err
		}
		if hasBuildTag(f.Comments, "tools") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		fn(filepath.ToSlash(rel), test, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hasBuildTag(groups []*ast.CommentGroup, tag string) bool {
	for _, g := range groups {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, tag) {
				return true
			}
		}
	}
	return false
}
