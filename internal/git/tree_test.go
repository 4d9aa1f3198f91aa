package git_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neuraphage/neuraphage-go/internal/git"
)

// The helpers of this file are prefixed "tt" so that they do not collide
// with helpers of other test files of the package.

// ttState is what WorkTreeTree must leave alone: the index file's bytes
// (nil when there is none), git's status, and every file outside .git.
type ttState struct {
	Index  []byte
	Status string
	Files  map[string]string // path → mode and content
}

// ttIndexPath returns the index file of the work tree at dir.
func ttIndexPath(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(mustGit(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index"))
}

func ttTake(t *testing.T, dir string) ttState {
	t.Helper()
	s := ttState{
		Status: mustGit(t, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all"),
		Files:  map[string]string{},
	}
	b, err := os.ReadFile(ttIndexPath(t, dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	s.Index = b
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var content []byte
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			content = []byte("-> " + l)
		} else if content, err = os.ReadFile(p); err != nil {
			return err
		}
		s.Files[filepath.ToSlash(rel)] = info.Mode().String() + " " + string(content)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ttListing returns the files of tree: path → "mode content".
func ttListing(t *testing.T, dir, tree string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for rec := range strings.SplitSeq(mustGit(t, dir, "ls-tree", "-r", "-z", "--full-tree", tree), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta) // mode type object
		files[path] = f[0] + " " + mustGit(t, dir, "cat-file", "blob", f[2])
	}
	return files
}

// ttWorkTreeTree calls WorkTreeTree and checks that it changed nothing.
func ttWorkTreeTree(t *testing.T, dir string) string {
	t.Helper()
	before := ttTake(t, dir)
	tree, err := git.WorkTreeTree(context.Background(), dir)
	if err != nil {
		t.Fatalf("WorkTreeTree(%s): %v", dir, err)
	}
	if !rtHexOID.MatchString(tree) {
		t.Fatalf("WorkTreeTree = %q, want a tree id", tree)
	}
	if typ := strings.TrimSpace(mustGit(t, dir, "cat-file", "-t", tree)); typ != "tree" {
		t.Fatalf("WorkTreeTree = %s, a %s", tree, typ)
	}
	if diff := cmp.Diff(before, ttTake(t, dir)); diff != "" {
		t.Errorf("WorkTreeTree changed the work tree, its index or its status (-before +after):\n%s", diff)
	}
	return tree
}

// ttAddAllInCopy copies the repository at dir and returns the tree `git
// add -A && git write-tree` gives in the copy.
func ttAddAllInCopy(t *testing.T, dir string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	mustGit(t, cp, "add", "-A")
	return strings.TrimSpace(mustGit(t, cp, "write-tree"))
}

func TestWorkTreeTreeMatchesAddAll(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{
		".gitignore":             "*.log\nbuild/\n",
		"clean.txt":              "clean\n",
		"modified.txt":           "committed\n",
		"deleted.txt":            "deleted\n",
		"staged.txt":             "committed\n",
		"staged-then-edited.txt": "committed\n",
		"run.sh":                 "#!/bin/sh\n",
		"sub/inner.txt":          "inner\n",
	})
	write(t, dir, "tracked.log", "tracked although ignored\n")
	mustGit(t, dir, "add", "-f", "tracked.log")
	mustGit(t, dir, "commit", "-q", "-m", "an ignored file tracked")
	write(t, dir, "modified.txt", "modified\n")
	if err := os.Remove(filepath.Join(dir, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "staged.txt", "staged\n")
	write(t, dir, "staged-then-edited.txt", "staged\n")
	mustGit(t, dir, "add", "staged.txt", "staged-then-edited.txt")
	write(t, dir, "staged-then-edited.txt", "edited after staging\n")
	write(t, dir, "staged-new.txt", "new and staged\n")
	mustGit(t, dir, "add", "staged-new.txt")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "untracked.txt", "untracked\n")
	write(t, dir, "new/deep/dir/file.txt", "in a new directory\n")
	write(t, dir, "with space ü.txt", "odd name\n")
	if err := os.Symlink("clean.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out.bin", "ignored too\n")
	write(t, dir, "tracked.log", "tracked, changed\n")

	tree := ttWorkTreeTree(t, dir)
	if want := ttAddAllInCopy(t, dir); tree != want {
		t.Errorf("WorkTreeTree = %s, want %s (git add -A && git write-tree in a copy)", tree, want)
	}
	want := map[string]string{
		".gitignore":             "100644 *.log\nbuild/\n",
		"clean.txt":              "100644 clean\n",
		"modified.txt":           "100644 modified\n",
		"staged.txt":             "100644 staged\n",
		"staged-then-edited.txt": "100644 edited after staging\n",
		"staged-new.txt":         "100644 new and staged\n",
		"run.sh":                 "100755 #!/bin/sh\n",
		"sub/inner.txt":          "100644 inner\n",
		"tracked.log":            "100644 tracked, changed\n",
		"untracked.txt":          "100644 untracked\n",
		"new/deep/dir/file.txt":  "100644 in a new directory\n",
		"with space ü.txt":       "100644 odd name\n",
		"link":                   "120000 clean.txt",
	}
	if diff := cmp.Diff(want, ttListing(t, dir, tree)); diff != "" {
		t.Errorf("tree listing (-want +got):\n%s", diff)
	}
}

// A clean work tree gives HEAD's tree.
func TestWorkTreeTreeClean(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	tree := ttWorkTreeTree(t, dir)
	if head := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD^{tree}")); tree != head {
		t.Errorf("WorkTreeTree of a clean work tree = %s, want HEAD's tree %s", tree, head)
	}
}

func TestWorkTreeTreeUnbornHead(t *testing.T) {
	t.Parallel()
	newRepo := func(t *testing.T) string {
		dir := t.TempDir()
		mustGit(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
		write(t, dir, ".gitignore", "*.tmp\n")
		write(t, dir, "a.txt", "a\n")
		write(t, dir, "sub/b.txt", "b\n")
		write(t, dir, "scratch.tmp", "ignored\n")
		return dir
	}
	want := map[string]string{
		".gitignore": "100644 *.tmp\n",
		"a.txt":      "100644 a\n",
		"sub/b.txt":  "100644 b\n",
	}
	t.Run("no index", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t)
		tree := ttWorkTreeTree(t, dir)
		if _, err := os.Lstat(ttIndexPath(t, dir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("an index was made (Lstat: %v)", err)
		}
		if diff := cmp.Diff(want, ttListing(t, dir, tree)); diff != "" {
			t.Errorf("tree listing (-want +got):\n%s", diff)
		}
		if cp := ttAddAllInCopy(t, dir); tree != cp {
			t.Errorf("WorkTreeTree = %s, want %s", tree, cp)
		}
	})
	t.Run("staged files", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t)
		mustGit(t, dir, "add", "a.txt")
		write(t, dir, "a.txt", "a, edited after staging\n")
		tree := ttWorkTreeTree(t, dir)
		want := map[string]string{
			".gitignore": "100644 *.tmp\n",
			"a.txt":      "100644 a, edited after staging\n",
			"sub/b.txt":  "100644 b\n",
		}
		if diff := cmp.Diff(want, ttListing(t, dir, tree)); diff != "" {
			t.Errorf("tree listing (-want +got):\n%s", diff)
		}
	})
	t.Run("nothing at all", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		mustGit(t, dir, "init", "-q")
		tree := ttWorkTreeTree(t, dir)
		if empty := strings.TrimSpace(mustGit(t, dir, "hash-object", "-t", "tree", os.DevNull)); tree != empty {
			t.Errorf("WorkTreeTree of an empty repository = %s, want the empty tree %s", tree, empty)
		}
	})
}

// In a linked worktree, the worktree's own index is the one copied, and
// neither it nor the main checkout's is touched.
func TestWorkTreeTreeLinkedWorktree(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{".gitignore": "*.log\n", "a.txt": "a\n", "b.txt": "b\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	write(t, dir, "main-only.txt", "in the main checkout\n")
	write(t, wt, "a.txt", "a in the worktree\n")
	mustGit(t, wt, "add", "a.txt")
	if err := os.Remove(filepath.Join(wt, "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, wt, "new/c.txt", "c\n")
	write(t, wt, "x.log", "ignored\n")
	mainBefore := ttTake(t, dir)

	tree := ttWorkTreeTree(t, wt)
	want := map[string]string{
		".gitignore": "100644 *.log\n",
		"a.txt":      "100644 a in the worktree\n",
		"new/c.txt":  "100644 c\n",
	}
	if diff := cmp.Diff(want, ttListing(t, wt, tree)); diff != "" {
		t.Errorf("tree listing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mainBefore, ttTake(t, dir)); diff != "" {
		t.Errorf("the main checkout changed (-before +after):\n%s", diff)
	}
}

func TestWorkTreeTreeNotRepo(t *testing.T) {
	t.Parallel()
	if tree, err := git.WorkTreeTree(context.Background(), t.TempDir()); err == nil {
		t.Errorf("WorkTreeTree of a plain directory = %s, want an error", tree)
	}
}

// WorkTreeTree leaves no temporary index behind. It changes TMPDIR: not
// parallel.
func TestWorkTreeTreeRemovesItsTemporaryIndex(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "a.txt", "changed\n")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ttWorkTreeTree(t, dir)
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("left in TMPDIR: %v, %v", left, err)
	}
}

// A file changed in the same second its index entry was written, keeping
// its size, is "racily clean": its stat data matches the entry, and only
// the index file's own modification time (not older than the file's) tells
// git to look at its content. git status sees the change; the tree must
// hold it too.
//
// core.trustctime=false makes the case deterministic: otherwise the file's
// ctime must also fall in the second of the entry's, which is what happens
// naturally when a tool writes a file, stages it and rewrites it at once.
func TestWorkTreeTreeRacilyCleanFile(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"f.txt": "old\n"})
	mustGit(t, dir, "config", "core.trustctime", "false")
	at := time.Now().Add(-time.Hour).Truncate(time.Second).Add(100 * time.Millisecond)
	f := filepath.Join(dir, "f.txt")
	if err := os.Chtimes(f, at, at); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "add", "f.txt") // the entry records mtime at
	// The index was written in that same instant, and the file rewritten
	// (same size) right after.
	if err := os.Chtimes(ttIndexPath(t, dir), at, at); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "f.txt", "new\n")
	if err := os.Chtimes(f, at, at); err != nil {
		t.Fatal(err)
	}
	if st := mustGit(t, dir, "status", "--porcelain"); st != " M f.txt\n" {
		t.Fatalf("git status = %q, want f.txt modified", st)
	}
	tree := ttWorkTreeTree(t, dir)
	if diff := cmp.Diff(map[string]string{"f.txt": "100644 new\n"}, ttListing(t, dir, tree)); diff != "" {
		t.Errorf("tree listing (-want +got):\n%s", diff)
	}
}
