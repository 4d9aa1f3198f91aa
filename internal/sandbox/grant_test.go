package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadGrants: the grants cover every sibling on the way down to a
// denied path and nothing beneath it, follow a denied symlink to its
// target, grant no symlink, and survive a denied path that does not exist.
func TestReadGrants(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.ssh", "home/project", "vault/keys", "vault/public"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/notes.txt", "home/.ssh/id_ed25519", "vault/keys/k"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "vault", "keys"), filepath.Join(root, "home", ".keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "home", ".ssh"), filepath.Join(root, "home", "ssh-link")); err != nil {
		t.Fatal(err)
	}
	p := func(s string) string { return filepath.Join(root, s) }
	g := ReadGrants([]string{p("home/.ssh"), p("home/.keys"), p("home/missing/deep"), "relative/ignored"})

	for _, want := range []string{p("home/project"), p("vault/public")} {
		if !slices.Contains(g.Dirs, want) {
			t.Errorf("%s not granted", want)
		}
	}
	if !slices.Contains(g.Files, p("home/notes.txt")) {
		t.Errorf("home/notes.txt not granted")
	}
	for _, want := range []string{"/", root, p("home"), p("vault")} {
		if !slices.Contains(g.Listed, want) {
			t.Errorf("%s not listed; listed %v", want, g.Listed)
		}
	}
	for _, list := range [][]string{g.Dirs, g.Files, g.Listed} {
		for _, got := range list {
			for _, denied := range []string{p("home/.ssh"), p("vault/keys"), p("home/ssh-link"), p("home/.keys")} {
				if got == denied || strings.HasPrefix(got, denied+"/") {
					t.Errorf("%s is granted", got)
				}
			}
			if got == root || got == p("home") || (strings.HasPrefix(root, got+"/") && got != "/") {
				if slices.Contains(g.Dirs, got) {
					t.Errorf("ancestor %s is granted whole", got)
				}
			}
		}
	}
	if all := ReadGrants(nil); !slices.Equal(all.Dirs, []string{"/"}) {
		t.Errorf("no denied paths: %+v, want / whole", all)
	}
}
