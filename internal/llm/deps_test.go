package llm_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/neuraphage/neuraphage-go/"

// llmImports maps each package under internal/llm (relative to the module
// root) to the imports of its non-test files.
func llmImports(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Join("internal/llm", filepath.Dir(path)))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			graph[pkg] = append(graph[pkg], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestImportGraph keeps each vendor SDK in its own package, so that most
// test binaries never link them, and keeps the core free of providers.
func TestImportGraph(t *testing.T) {
	t.Parallel()
	const (
		anthropic = "github.com/anthropics/anthropic-sdk-go"
		openai    = "github.com/openai/openai-go"
		sub       = module + "internal/llm/"
	)
	graph := llmImports(t)
	forbidden := map[string][]string{
		"internal/llm":            {anthropic, openai, sub},
		"internal/llm/llmtest":    {anthropic, openai},
		"internal/llm/clienttest": {anthropic, openai},
		"internal/llm/retry":      {anthropic, openai},
		"internal/llm/limit":      {anthropic, openai},
		"internal/llm/anthropic":  {openai},
		"internal/llm/openai":     {anthropic},
		"internal/llm/responses":  {anthropic, openai},
		"internal/llm/gemini":     {anthropic, openai},
		"internal/llm/httpapi":    {anthropic, openai},
		"internal/llm/sse":        {anthropic, openai, sub},
	}
	for pkg, bad := range forbidden {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("package %s not found", pkg)
		}
		// Walk the module-internal dependencies of pkg.
		seen := map[string]bool{pkg: true}
		queue := []string{pkg}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, imp := range graph[p] {
				for _, b := range bad {
					if strings.HasPrefix(imp, b) {
						t.Errorf("%s depends on %s (through %s)", pkg, imp, p)
					}
				}
				if rel, ok := strings.CutPrefix(imp, module); ok && !seen[rel] {
					seen[rel] = true
					queue = append(queue, rel)
				}
			}
		}
	}
}
