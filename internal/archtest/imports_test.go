package archtest

import (
	"go/ast"
	"go/parser"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/neuraphage/neuraphage-go"

// imports maps each package of the module (by path relative to the module
// root) to the packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	walkGoFiles(t, parser.ImportsOnly, false, func(pkg string, _ bool, f *ast.File) {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[pkg] = append(out[pkg], p)
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
	})
	return out
}

// internalDeps returns the module packages pkg depends on, transitively.
func internalDeps(graph map[string][]string, pkg string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		for _, imp := range graph[p] {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			visit(rel)
		}
	}
	visit(pkg)
	return seen
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// TestDomainPackagesDoNoIO: the pure packages import no I/O and nothing
// internal that does.
func TestDomainPackagesDoNoIO(t *testing.T) {
	t.Parallel()
	graph := imports(t)
	pure := []string{"internal/task", "internal/event", "internal/api", "internal/llm", "internal/engine", "internal/inject", "internal/knowledge", "internal/words", "internal/interject"}
	forbidden := []string{"os", "os/exec", "net", "net/http", "database/sql", "syscall", "io/fs", "os/signal"}
	// internal/llm classifies transport errors and reads Retry-After headers:
	// it uses the error types and constants of these packages and performs no
	// I/O itself (the providers in its subpackages do).
	typesOnly := map[string][]string{"internal/llm": {"net", "net/http", "syscall"}}
	for _, pkg := range pure {
		if _, ok := graph[pkg]; !ok {
			continue // not built yet
		}
		for _, imp := range graph[pkg] {
			for _, f := range forbidden {
				if imp == f && !contains(typesOnly[pkg], imp) {
					t.Errorf("%s imports %s: domain packages do no I/O", pkg, imp)
				}
			}
		}
		for dep := range internalDeps(graph, pkg) {
			ok := false
			for _, p := range pure {
				if dep == p {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s depends on %s: domain packages depend only on other domain packages", pkg, dep)
			}
		}
	}
}

// TestClientsNeverImportDaemonInternals: the CLI, the TUI and the MCP server
// reach the daemon only through api/client.
func TestClientsNeverImportDaemonInternals(t *testing.T) {
	t.Parallel()
	graph := imports(t)
	internals := []string{"internal/daemon", "internal/tasks", "internal/store", "internal/api/server", "internal/executor", "internal/supervise", "internal/syncer", "internal/agent", "internal/engine", "internal/merge", "internal/worktree", "internal/mainwatch"}
	for _, client := range []string{"internal/cli", "internal/tui", "internal/web", "internal/fleet", "internal/mcp"} {
		if _, ok := graph[client]; !ok {
			continue
		}
		for dep := range internalDeps(graph, client) {
			for _, in := range internals {
				if under(dep, in) {
					t.Errorf("%s depends on %s (daemon internals); use internal/api/client", client, dep)
				}
			}
		}
	}
}

// TestOnlyRunnersStartProcesses: os/exec is imported only by the packages
// that own running other programs.
func TestOnlyRunnersStartProcesses(t *testing.T) {
	t.Parallel()
	allowed := []string{"internal/spawn", "internal/git", "internal/proc"}
	var bad []string
	for pkg, imps := range imports(t) {
		for _, imp := range imps {
			if imp != "os/exec" {
				continue
			}
			ok := false
			for _, a := range allowed {
				if under(pkg, a) {
					ok = true
				}
			}
			if !ok {
				bad = append(bad, pkg)
			}
		}
	}
	sort.Strings(bad)
	for _, pkg := range bad {
		t.Errorf("%s imports os/exec; run programs through internal/spawn or the git runner", pkg)
	}
}

// TestCoreNeverImportsTheTUIToolkit: Bubble Tea stays inside internal/tui.
func TestCoreNeverImportsTheTUIToolkit(t *testing.T) {
	t.Parallel()
	for pkg, imps := range imports(t) {
		for _, imp := range imps {
			if (strings.HasPrefix(imp, "github.com/charmbracelet/") || strings.HasPrefix(imp, "charm.land/")) && !under(pkg, "internal/tui") {
				t.Errorf("%s imports %s; only internal/tui may", pkg, imp)
			}
		}
	}
}

// TestOnlyMCPImportsTheSDK: the Model Context Protocol SDK stays inside
// internal/mcp; the CLI and the daemon call it through that package.
func TestOnlyMCPImportsTheSDK(t *testing.T) {
	t.Parallel()
	for pkg, imps := range imports(t) {
		for _, imp := range imps {
			if strings.HasPrefix(imp, "github.com/modelcontextprotocol/") && !under(pkg, "internal/mcp") {
				t.Errorf("%s imports %s; only internal/mcp may", pkg, imp)
			}
		}
	}
}

// TestOnlyTheEdgesImportTheWireTypes: internal/api holds wire types only.
// Services return their own domain types; api/server converts them to wire
// types and api/client reads them back; the CLI, the TUI and the daemon
// (which wires the server) are the other edges. No domain or service
// package imports internal/api or its subpackages.
func TestOnlyTheEdgesImportTheWireTypes(t *testing.T) {
	t.Parallel()
	edges := []string{"internal/api", "internal/cli", "internal/tui", "internal/fleet", "internal/web", "internal/mcp", "internal/daemon", "cmd"}
	var bad []string
	for pkg, imps := range imports(t) {
		edge := false
		for _, e := range edges {
			if under(pkg, e) {
				edge = true
			}
		}
		if edge {
			continue
		}
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok && under(rel, "internal/api") {
				bad = append(bad, pkg+" imports "+rel)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: only api/server, api/client, cli, tui, fleet, web, mcp, daemon and cmd use the wire types; return a domain type and convert it in api/server", b)
	}
}
