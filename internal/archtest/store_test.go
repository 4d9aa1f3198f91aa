package archtest

import (
	"go/ast"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxStoreInterface is the most methods an interface made of store methods
// may have: a consumer that needs more takes two of them.
const maxStoreInterface = 8

// wholeStoreHolders may name store.Store: the composition root, the
// implementation and the conformance suite.
var wholeStoreHolders = []string{"internal/daemon", "internal/store/sqlite", "internal/store/storetest"}

// sources parses the non-test Go files of the module, by package directory
// relative to the module root.
func sources(t *testing.T) map[string][]*ast.File {
	t.Helper()
	out := map[string][]*ast.File{}
	walkGoFiles(t, 0, false, func(pkg string, _ bool, f *ast.File) {
		out[pkg] = append(out[pkg], f)
	})
	return out
}

// storeName is the name file f imports internal/store under, "" when it
// does not.
func storeName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/internal/store" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "store"
		}
	}
	return ""
}

// interfaces returns the interface types a package declares, by name.
func interfaces(files []*ast.File) map[string]*ast.InterfaceType {
	out := map[string]*ast.InterfaceType{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					out[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	return out
}

// methodSet returns the names of it's methods, resolving embedded
// interfaces of its own package (local) and of internal/store (roles, under
// the name storePkg). ok is false when it embeds anything else.
func methodSet(it *ast.InterfaceType, local map[string]*ast.InterfaceType, storePkg string, roles map[string][]string) (names []string, ok bool) {
	seen := map[string]bool{}
	ok = true
	var walk func(it *ast.InterfaceType, depth int)
	walk = func(it *ast.InterfaceType, depth int) {
		if depth > 10 {
			ok = false
			return
		}
		for _, m := range it.Methods.List {
			switch x := m.Type.(type) {
			case *ast.FuncType:
				for _, n := range m.Names {
					seen[n.Name] = true
				}
			case *ast.Ident:
				if emb, found := local[x.Name]; found {
					walk(emb, depth+1)
				} else {
					ok = false
				}
			case *ast.SelectorExpr:
				if id, isIdent := x.X.(*ast.Ident); isIdent && storePkg != "" && id.Name == storePkg && roles[x.Sel.Name] != nil {
					for _, n := range roles[x.Sel.Name] {
						seen[n] = true
					}
				} else {
					ok = false
				}
			default:
				ok = false
			}
		}
	}
	walk(it, 0)
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, ok
}

// storeRoles returns internal/store's interfaces (its roles and Store, their
// embedding) by name, each as its method names.
func storeRoles(t *testing.T, src map[string][]*ast.File) map[string][]string {
	t.Helper()
	decl := interfaces(src["internal/store"])
	roles := map[string][]string{}
	for name, it := range decl {
		ms, ok := methodSet(it, decl, "", nil)
		if !ok {
			t.Fatalf("internal/store: interface %s embeds something outside the package", name)
		}
		roles[name] = ms
	}
	if len(roles["Store"]) == 0 {
		t.Fatal("internal/store declares no Store interface")
	}
	return roles
}

// TestOnlyTheCompositionRootHoldsTheWholeStore: every other package declares
// the part of the store it uses (STYLE.md rule 4).
func TestOnlyTheCompositionRootHoldsTheWholeStore(t *testing.T) {
	t.Parallel()
	src := sources(t)
	var pkgs []string
	for pkg := range src {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if contains(wholeStoreHolders, pkg) {
			continue
		}
		for _, f := range src[pkg] {
			name := storeName(f)
			if name == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
						t.Errorf("%s names store.Store; declare the methods it uses (or embed store roles) in an interface of its own", pkg)
						return false
					}
				}
				return true
			})
		}
	}
}

// TestStoreInterfacesAreRoleSized: the store's roles, and every interface
// made only of store methods (a consumer's view of the store), have at most
// maxStoreInterface methods.
func TestStoreInterfacesAreRoleSized(t *testing.T) {
	t.Parallel()
	src := sources(t)
	roles := storeRoles(t, src)
	all := map[string]bool{}
	for _, n := range roles["Store"] {
		all[n] = true
	}
	for name, ms := range roles {
		if name != "Store" && len(ms) > maxStoreInterface {
			t.Errorf("store.%s has %d methods; split the role (at most %d)", name, len(ms), maxStoreInterface)
		}
	}
	largest, largestN := "", 0
	for pkg, files := range src {
		if pkg == "internal/store" {
			continue
		}
		decl := interfaces(files)
		for name, it := range decl {
			storePkg := ""
			for _, f := range files {
				if n := storeName(f); n != "" {
					storePkg = n
				}
			}
			ms, ok := methodSet(it, decl, storePkg, roles)
			if !ok || len(ms) == 0 {
				continue
			}
			isStore := true
			for _, m := range ms {
				if !all[m] {
					isStore = false
				}
			}
			if !isStore {
				continue
			}
			if len(ms) > maxStoreInterface {
				t.Errorf("%s.%s has %d store methods (%s); split it (at most %d)", pkg, name, len(ms), strings.Join(ms, ", "), maxStoreInterface)
			}
			if len(ms) > largestN || len(ms) == largestN && pkg+"."+name < largest {
				largest, largestN = pkg+"."+name, len(ms)
			}
		}
	}
	t.Logf("largest consumer interface of the store: %s, %d methods", largest, largestN)
}

// TestConformanceSuiteCoversEveryStoreMethod: storetest calls every method
// of store.Store, so every implementation is held to all of it.
func TestConformanceSuiteCoversEveryStoreMethod(t *testing.T) {
	t.Parallel()
	src := sources(t)
	roles := storeRoles(t, src)
	called := map[string]bool{}
	for _, f := range src["internal/store/storetest"] {
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					called[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	for _, m := range roles["Store"] {
		if !called[m] {
			t.Errorf("storetest never calls store.Store.%s; add it to the conformance suite", m)
		}
	}
}
