package knowledge_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package pure: the standard library without I/O,
// and of the module only the event payloads, llm's reply decoding and the
// pure text helpers in words.
func TestImports(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{
		"github.com/neuraphage/neuraphage-go/internal/event": true,
		"github.com/neuraphage/neuraphage-go/internal/llm":   true,
		"github.com/neuraphage/neuraphage-go/internal/words": true,
	}
	forbidden := []string{"os", "os/exec", "os/signal", "net", "net/http", "database/sql", "syscall", "io/fs", "sync", "time"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(p, "/")[0], ".") && !allowed[p] {
				t.Errorf("%s imports %s: knowledge imports only the standard library, event, llm and words", name, p)
			}
			for _, bad := range forbidden {
				if p == bad {
					t.Errorf("%s imports %s: knowledge does no I/O and keeps no clock or goroutines", name, p)
				}
			}
		}
	}
}
