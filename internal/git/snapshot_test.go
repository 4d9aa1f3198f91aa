package git_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neuraphage/neuraphage-go/internal/git"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	committed := map[string]string{
		"clean.txt":       "clean\n",
		"dirty.txt":       "committed\n",
		"gone.txt":        "gone\n",
		"sub/inner.txt":   "inner\n",
		"with space ü.go": "package x\n",
	}
	type step func(t *testing.T, dir string)
	rm := func(path string) step {
		return func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, path)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put := func(path, content string) step {
		return func(t *testing.T, dir string) { write(t, dir, path, content) }
	}
	gitDo := func(args ...string) step {
		return func(t *testing.T, dir string) { mustGit(t, dir, args...) }
	}
	// dirtyBefore makes dirty.txt and new.txt dirty before the first
	// snapshot, as earlier tool calls would.
	dirtyBefore := []step{put("dirty.txt", "changed\n"), put("new.txt", "new\n")}
	tests := []struct {
		name   string
		before []step // before the first snapshot
		during []step // between the snapshots
		want   []git.Change
	}{
		{name: "nothing", before: dirtyBefore},
		{
			name:   "new untracked file",
			during: []step{put("created.txt", "x"), put("deep/dir/f.txt", "y")},
			want:   []git.Change{{"created.txt", git.Created}, {"deep/dir/f.txt", git.Created}},
		},
		{
			name:   "clean tracked file modified",
			during: []step{put("clean.txt", "edited\n")},
			want:   []git.Change{{"clean.txt", git.Modified}},
		},
		{
			name:   "dirty file modified again",
			before: dirtyBefore,
			during: []step{put("dirty.txt", "changed twice\n")},
			want:   []git.Change{{"dirty.txt", git.Modified}},
		},
		{
			name:   "tracked file deleted",
			during: []step{rm("gone.txt")},
			want:   []git.Change{{"gone.txt", git.Deleted}},
		},
		{
			name:   "untracked file deleted",
			before: dirtyBefore,
			during: []step{rm("new.txt")},
			want:   []git.Change{{"new.txt", git.Deleted}},
		},
		{
			name:   "deleted file restored",
			before: []step{rm("gone.txt")},
			during: []step{gitDo("checkout", "--", "gone.txt")},
			want:   []git.Change{{"gone.txt", git.Created}},
		},
		{
			name:   "dirty file reverted",
			before: dirtyBefore,
			during: []step{gitDo("checkout", "--", "dirty.txt")},
			want:   []git.Change{{"dirty.txt", git.Modified}},
		},
		{
			name:   "dirty files committed",
			before: dirtyBefore,
			during: []step{gitDo("add", "-A"), gitDo("commit", "-q", "-m", "x")},
		},
		{
			name:   "index only changes",
			before: dirtyBefore,
			during: []step{gitDo("add", "new.txt"), gitDo("rm", "-q", "--cached", "clean.txt")},
		},
		{
			name:   "rename",
			during: []step{gitDo("mv", "clean.txt", "moved.txt")},
			want:   []git.Change{{"clean.txt", git.Deleted}, {"moved.txt", git.Created}},
		},
		{
			name:   "unusual names",
			during: []step{put("with space ü.go", "package y\n"), put("new\nline.txt", "x")},
			want:   []git.Change{{"new\nline.txt", git.Created}, {"with space ü.go", git.Modified}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := repo(t, committed)
			for _, s := range tt.before {
				s(t, dir)
			}
			before, err := git.TakeSnapshot(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.during {
				s(t, dir)
			}
			after, err := before.Retake(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, git.Diff(before, after)); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

// A file rewritten with the same size and the same modification time is
// still seen: its content was summed because it had just been modified.
func TestDiffSameSizeSameTime(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"f.txt": "one\n"})
	write(t, dir, "f.txt", "two\n")
	before, err := git.TakeSnapshot(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := before.Files["f.txt"]
	if st.Sum == "" {
		t.Fatalf("a file modified just now has no sum: %+v", st)
	}
	write(t, dir, "f.txt", "six\n")
	mtime := time.Unix(0, st.ModTime)
	if err := os.Chtimes(filepath.Join(dir, "f.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	after, err := before.Retake(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []git.Change{{"f.txt", git.Modified}}
	if diff := cmp.Diff(want, git.Diff(before, after)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
}

// A snapshot of a subdirectory lists paths relative to it and nothing
// outside it.
func TestSnapshotOfSubdirectory(t *testing.T) {
	t.Parallel()
	root := repo(t, map[string]string{"sub/a.txt": "a\n", "top.txt": "t\n"})
	dir := filepath.Join(root, "sub")
	before, err := git.TakeSnapshot(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "sub/a.txt", "changed\n")
	write(t, root, "sub/b/c.txt", "new\n")
	write(t, root, "top.txt", "changed\n")
	after, err := before.Retake(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []git.Change{{"a.txt", git.Modified}, {"b/c.txt", git.Created}}
	if diff := cmp.Diff(want, git.Diff(before, after)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
}

// Without Retake, Diff guesses for paths that became clean from their old
// status.
func TestDiffWithoutRetake(t *testing.T) {
	t.Parallel()
	before := git.Snapshot{Files: map[string]git.FileState{
		"untracked": {Status: "??", Exists: true},
		"modified":  {Status: " M", Exists: true},
		"deleted":   {Status: " D"},
	}}
	after := git.Snapshot{Files: map[string]git.FileState{}}
	want := []git.Change{{"deleted", git.Created}, {"modified", git.Modified}, {"untracked", git.Deleted}}
	if diff := cmp.Diff(want, git.Diff(before, after)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
}
