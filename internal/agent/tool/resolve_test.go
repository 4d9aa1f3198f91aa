package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// confined makes a working directory with symlinks inside it that point
// inside and outside, next to an outside directory with a secret. It
// returns the working directory (reached through a symlink, as /tmp is on
// macOS, when viaLink is set) and the outside directory.
func confined(t testing.TB, viaLink bool) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	real := filepath.Join(base, "work")
	outside = filepath.Join(base, "outside")
	writeTestFile(t, real, "file.txt", "inside\n")
	writeTestFile(t, real, "sub/nested.txt", "nested\n")
	writeTestFile(t, outside, "secret.txt", "secret\n")
	symlink(t, "file.txt", filepath.Join(real, "link-in"))
	symlink(t, "sub", filepath.Join(real, "dirlink-in"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(real, "link-out"))
	symlink(t, "../outside", filepath.Join(real, "dirlink-out"))
	symlink(t, filepath.Join(outside, "new.txt"), filepath.Join(real, "dangling-out"))
	symlink(t, "loop-b", filepath.Join(real, "loop-a"))
	symlink(t, "loop-a", filepath.Join(real, "loop-b"))
	dir = real
	if viaLink {
		dir = filepath.Join(base, "worklink")
		symlink(t, "work", dir)
	}
	return dir, outside
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, viaLink := range []bool{false, true} {
		dir, outside := confined(t, viaLink)
		root, _ := filepath.EvalSymlinks(dir)
		env := &Env{Dir: dir}
		allowed := []struct{ path, rel string }{
			{"file.txt", "file.txt"},
			{"./sub/../file.txt", "file.txt"},
			{"sub/nested.txt", "sub/nested.txt"},
			{"new/dir/file.txt", "new/dir/file.txt"},
			{".", "."},
			{"sub/..", "."},
			{filepath.Join(dir, "file.txt"), "file.txt"},
			{filepath.Join(root, "sub", "nested.txt"), "sub/nested.txt"},
			{"link-in", "file.txt"},
			{"dirlink-in/nested.txt", "sub/nested.txt"},
			{"dirlink-in/new.txt", "sub/new.txt"},
			{"dirlink-in/../file.txt", "file.txt"}, // .. after a symlink is taken from its target, as the kernel does
		}
		for _, a := range allowed {
			abs, rel, err := resolve(env, a.path)
			if err != nil {
				t.Errorf("viaLink=%v resolve(%q): %v", viaLink, a.path, err)
				continue
			}
			if rel != a.rel || abs != filepath.Join(root, filepath.FromSlash(a.rel)) {
				t.Errorf("viaLink=%v resolve(%q) = %q, %q; want rel %q", viaLink, a.path, abs, rel, a.rel)
			}
		}
		refused := []struct{ path, msg string }{
			{"", "empty"},
			{"..", "outside the working directory"},
			{"../outside/secret.txt", "outside the working directory"},
			{"sub/../../outside/secret.txt", "outside the working directory"},
			{"/etc/passwd", "outside the working directory"},
			{filepath.Join(outside, "secret.txt"), "outside the working directory"},
			{"link-out", "goes through a symlink"},
			{"dirlink-out/secret.txt", "goes through a symlink"},
			{"dirlink-out/new.txt", "goes through a symlink"}, // writing a new file through a symlinked dir
			{"dangling-out", "goes through a symlink"},        // writing would create the link's target
			{"missing/../link-out", "goes through a symlink"},
			{"file.txt/../link-out", "goes through a symlink"},
			{"loop-a", "too many levels of symbolic links"},
			{"a\x00b", "NUL"},
		}
		for _, r := range refused {
			abs, rel, err := resolve(env, r.path)
			if err == nil {
				t.Errorf("viaLink=%v resolve(%q) = %q, %q; want an error", viaLink, r.path, abs, rel)
				continue
			}
			if !strings.Contains(err.Error(), r.msg) {
				t.Errorf("viaLink=%v resolve(%q): %v; want it to say %q", viaLink, r.path, err, r.msg)
			}
		}
	}
}

func TestResolveWorkingDirectoryMissing(t *testing.T) {
	t.Parallel()
	for _, env := range []*Env{{}, {Dir: filepath.Join(t.TempDir(), "gone")}} {
		if _, _, err := resolve(env, "x"); err == nil {
			t.Errorf("resolve with Dir %q: no error", env.Dir)
		}
	}
}

// FuzzResolve: whatever the path, a resolved one is inside the working
// directory and has no symlink in it.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"file.txt", "..", "../outside/secret.txt", "/etc/passwd", "link-out", "dirlink-out/x",
		"dirlink-in/../../outside", "dangling-out", "missing/../link-out", "loop-a/x", "./././", "sub//nested.txt", "a/b/../../..", "~", "$HOME"} {
		f.Add(s)
	}
	dir, _ := confined(f, false)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		f.Fatal(err)
	}
	env := &Env{Dir: dir}
	f.Fuzz(func(t *testing.T, path string) {
		abs, rel, err := resolve(env, path)
		if err != nil {
			return
		}
		if !within(root, abs) {
			t.Fatalf("resolve(%q) = %q, outside %q", path, abs, root)
		}
		if filepath.Join(root, filepath.FromSlash(rel)) != abs {
			t.Fatalf("resolve(%q): rel %q does not name abs %q", path, rel, abs)
		}
		// The existing part of abs has no symlinks left.
		p := abs
		for {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			p = filepath.Dir(p)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			t.Fatalf("resolve(%q) = %q, whose existing part %q is a symlink to %q", path, abs, p, real)
		}
	})
}
