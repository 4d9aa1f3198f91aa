package sandbox_test

import (
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// objectCases are the ways task t1 could change or remove the shared
// object store's loose objects, or widen what its git reads, run in
// TestEscapes: each must fail and leave the store (w.store) as it was.
// $GIT_OBJECT_DIRECTORY is the task's own object directory, as the launcher
// sets it. The commits' messages are new: an object the task wrote before
// (a commit refused a ref, say) would be found and not written again.
var objectCases = []struct{ name, cmd string }{
	{"rm a loose object", `rm -f "$REPO"/.git/objects/??/*`},
	{"rm the loose directories", `rm -rf "$REPO"/.git/objects/??`},
	{"truncate a loose object", `for f in "$REPO"/.git/objects/??/*; do : > "$f" || exit 1; done`},
	{"chmod and overwrite a loose object", `for f in "$REPO"/.git/objects/??/*; do chmod u+w "$f" && echo pwned > "$f" || exit 1; done`},
	{"replace a loose object by a symlink", `for f in "$REPO"/.git/objects/??/*; do ln -sf "$OUT/victim.txt" "$f" || exit 1; done`},
	{"move a file over a loose object", `for f in "$REPO"/.git/objects/??/*; do echo x > "$TMPDIR/o" && mv -f "$TMPDIR/o" "$f" || exit 1; done`},
	{"add a file to a loose directory", `for d in "$REPO"/.git/objects/??; do echo x > "$d/00000000000000000000000000000000000000" || exit 1; done`},
	{"hard link a loose object into the task's directory, then write it", `for f in "$REPO"/.git/objects/??/*; do n=$(basename "$(dirname "$f")")/$(basename "$f"); mkdir -p "$GIT_OBJECT_DIRECTORY/${n%/*}"; ln "$f" "$GIT_OBJECT_DIRECTORY/$n" && chmod u+w "$GIT_OBJECT_DIRECTORY/$n" && echo x >> "$GIT_OBJECT_DIRECTORY/$n" || exit 1; done`},
	{"commit into the shared store", `env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git commit -q --allow-empty -m "new $(date +%N)"`},
	{"commit with the shared store named", `GIT_OBJECT_DIRECTORY="$REPO/.git/objects" git commit -q --allow-empty -m "new $(date +%N)"`},
	{"write the shared alternates", `echo "$OUT" >> "$REPO/.git/objects/info/alternates"`},
	{"give the task's directory alternates", `mkdir -p "$GIT_OBJECT_DIRECTORY/info" && echo "$OUT" > "$GIT_OBJECT_DIRECTORY/info/alternates"`},
	{"write a pack in the task's directory", `mkdir -p "$GIT_OBJECT_DIRECTORY/pack" && echo x > "$GIT_OBJECT_DIRECTORY/pack/pack-0.pack"`},
	{"write another task's object directory", `mkdir -p "$REPO/.git/neuraphage/objects/t2/00" && echo x > "$REPO/.git/neuraphage/objects/t2/00/x"`},
	{"git gc --prune=now, then the loose objects", `git gc -q --prune=now; rm -f "$REPO"/.git/objects/??/*`},
}

// store records the content of every file of the shared object store, of
// the other tasks' object directories, and of task t1's alternates (modes
// dropped: Landlock does not control chmod).
func (w *world) store(t *testing.T) map[string]string {
	t.Helper()
	s := contents(snapshot(t, filepath.Join(w.repo, ".git", "objects"), filepath.Join(w.common(), "neuraphage", "objects")))
	for p := range s {
		// The task's own loose objects are its to change; the rest of its
		// directory (no packs, no alternates) is not.
		if rel, err := filepath.Rel(w.own(), p); err == nil && len(rel) >= 2 && !strings.HasPrefix(rel, "..") && (len(rel) == 2 || rel[2] == filepath.Separator) {
			delete(s, p)
		}
	}
	// The lock of the alternates, and the shared alternates with no line
	// (a command's line is there while it runs), are no part of the store.
	delete(s, filepath.Join(w.common(), "neuraphage", "objects", ".flock"))
	if alt := filepath.Join(w.common(), "objects", "info", "alternates"); s[alt] == "" {
		delete(s, alt)
	}
	b, err := os.ReadFile(filepath.Join(w.own(), "info", "alternates"))
	s["task alternates"] = fmt.Sprint(string(b), err)
	if len(s) < 4 {
		t.Fatalf("the shared store holds almost nothing: %v", s)
	}
	return s
}

// TestObjectCasesUnconfined: without the sandbox each case of objectCases
// does change the shared store (or another task's objects, or what the
// task's git reads), so its failure in TestEscapes is the sandbox's doing.
func TestObjectCasesUnconfined(t *testing.T) {
	for _, tc := range objectCases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			before := w.store(t)
			env := append(slices.Clone(w.env), "GIT_OBJECT_DIRECTORY="+w.own(), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(w.common(), "objects"))
			res, err := proc.Run(context.Background(), proc.Cmd{Dir: w.wt, Shell: tc.cmd, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(before, w.store(t)); len(d) == 0 {
				t.Errorf("%s: exit %d, the store did not change: %s", tc.cmd, res.ExitCode, res.Output)
			}
		})
	}
}

// storeDiff is diff of two w.store snapshots, less the objects the shared
// store gained whose content is the object they are named after (a
// command's objects, moved into the store when it ends) and the loose
// directories made for them: a store may gain objects, never lose or
// change one.
func (w *world) storeDiff(t *testing.T, before, after map[string]string) []string {
	t.Helper()
	shared := filepath.Join(w.common(), "objects")
	return slices.DeleteFunc(diff(before, after), func(d string) bool {
		p, ok := strings.CutPrefix(d, "added ")
		if !ok {
			return false
		}
		rel, err := filepath.Rel(shared, p)
		if err != nil || len(rel) < 2 || !isHexName(rel[:2]) {
			return false
		}
		if len(rel) == 2 {
			return true // a loose directory
		}
		name := rel[:2] + rel[3:]
		if rel[2] != filepath.Separator || !isHexName(name) {
			return false
		}
		if err := looseValid(p, name); err != nil {
			t.Logf("%s: %v", p, err)
			return false
		}
		return true
	})
}

func isHexName(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return s != ""
}

// looseValid checks that the loose object file p inflates to content
// whose SHA-1 is name.
func looseValid(p, name string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return err
	}
	h := sha1.New()
	if _, err := io.Copy(h, z); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != name {
		return fmt.Errorf("content hashes to %s", got)
	}
	return nil
}

func (w *world) common() string { return filepath.Join(w.repo, ".git") }
func (w *world) own() string    { return sandbox.ObjectDir(w.common(), "t1") }

// objectPath returns where object id is loose in the object directory dir.
func objectPath(dir, id string) string { return filepath.Join(dir, id[:2], id[2:]) }

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// clean runs git fsck in the user's checkout and fails on any error or
// missing object.
func (w *world) clean(t *testing.T, when string) {
	t.Helper()
	res, err := proc.Run(context.Background(), proc.Cmd{Dir: w.repo, Args: []string{"git", "fsck", "--full", "--strict", "--no-dangling"}, Env: w.env})
	if err != nil || res.ExitCode != 0 || strings.Contains(res.Output, "missing") || strings.Contains(res.Output, "error") {
		t.Fatalf("%s: git fsck in the user's checkout: %v, exit %d:\n%s", when, err, res.ExitCode, res.Output)
	}
}

// TestTaskObjects: a task's commits go to its own object directory and,
// when the command ends, into the shared store, the directory left empty
// and unlisted; every other git (the user's log --all, gc, fsck) finds
// them; its gc cannot drop shared objects; released, its directory is gone,
// its branch and archive ref resolving.
func TestTaskObjects(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	res := w.sh(t, l, `echo c > c.txt && git add c.txt && git commit -q -m "task work" && git rev-parse HEAD && test -f "$GIT_OBJECT_DIRECTORY/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-)" && grep -x ../neuraphage/objects/t1 "$REPO/.git/objects/info/alternates"`)
	if res.ExitCode != 0 {
		t.Fatalf("commit, in the task's directory, listed while the command runs: %s", res.Output)
	}
	tip := strings.Fields(res.Output)[0]
	if !exists(objectPath(filepath.Join(w.common(), "objects"), tip)) {
		t.Fatalf("the task's commit %s is not in the shared store once the command ended", tip)
	}
	if n := w.ownObjects(t); n != 0 {
		t.Errorf("the task's object directory holds %d objects between commands, want none", n)
	}
	if b, _ := os.ReadFile(filepath.Join(w.common(), "objects", "info", "alternates")); strings.Contains(string(b), "t1") {
		t.Errorf("the shared alternates name the task between its commands: %q", b)
	}
	if got := w.git(t, w.repo, "log", "--all", "--format=%s"); !strings.Contains(got, "task work") {
		t.Errorf("git log --all in the user's checkout: %q, want the task's commit", got)
	}
	w.clean(t, "with the task's commit")
	objects := w.git(t, w.repo, "rev-list", "--all", "--objects")

	// The task's gc and prune drop nothing of the shared store.
	w.sh(t, l, `git gc -q --prune=now; git prune --expire=now; git repack -a -d -q`)
	if got := w.git(t, w.repo, "rev-list", "--all", "--objects"); got != objects {
		t.Errorf("the task's gc changed what is reachable")
	}
	w.clean(t, "after the task's gc")

	// The user's gc keeps the task's objects reachable.
	w.git(t, w.repo, "gc", "-q", "--prune=now")
	w.clean(t, "after the user's gc")
	if got := w.git(t, w.repo, "rev-parse", branchA); got != tip {
		t.Fatalf("after the user's gc, the task's branch is %s, want %s", got, tip)
	}

	// The worktree goes: the tip is archived, the branch deleted, then the
	// objects released.
	w.git(t, w.repo, "update-ref", "refs/neuraphage/archive/t1", tip)
	w.git(t, w.repo, "worktree", "remove", "--force", w.wt)
	w.git(t, w.repo, "update-ref", "-d", "refs/heads/"+branchA)
	if _, err := sandbox.ReleaseObjects(w.common(), "t1"); err != nil {
		t.Fatal(err)
	}
	if exists(w.own()) {
		t.Errorf("the task's object directory is still there")
	}
	if b, _ := os.ReadFile(filepath.Join(w.common(), "objects", "info", "alternates")); strings.Contains(string(b), "t1") {
		t.Errorf("the shared alternates still name the task: %q", b)
	}
	if got := w.git(t, w.repo, "log", "--format=%s", "-1", "refs/neuraphage/archive/t1"); got != "task work" {
		t.Errorf("the archive ref shows %q, want the task's commit", got)
	}
	w.clean(t, "after the release")
	// Released twice: nothing to do, nothing lost.
	if m, err := sandbox.ReleaseObjects(w.common(), "t1"); err != nil || m.Objects != 0 {
		t.Errorf("released again: %+v, %v", m, err)
	}
}

// TestReleaseInterrupted: a release stopped after any of its steps (the
// daemon killed) and run again loses no object.
func TestReleaseInterrupted(t *testing.T) {
	for _, stop := range []string{"after moving", "after the alternates line", "half deleted"} {
		t.Run(stop, func(t *testing.T) {
			w := newWorld(t)
			l := w.launcher(t)
			res := w.killedAtEnd(t, l, `for i in 1 2 3 4 5 6; do echo $i > f$i && git add f$i && git commit -q -m c$i || exit 1; done; git rev-parse HEAD`)
			if res.ExitCode != 0 {
				t.Fatalf("commits: %s", res.Output)
			}
			tip := strings.TrimSpace(res.Output)
			if _, err := sandbox.MigrateObjects(w.own(), filepath.Join(w.common(), "objects")); err != nil {
				t.Fatal(err)
			}
			if stop != "after moving" {
				alt := filepath.Join(w.common(), "objects", "info", "alternates")
				b, _ := os.ReadFile(alt)
				write(t, alt, strings.ReplaceAll(string(b), "../neuraphage/objects/t1\n", ""))
			}
			if stop == "half deleted" {
				dirs, _ := filepath.Glob(filepath.Join(w.own(), "??"))
				for _, d := range dirs[:len(dirs)/2] {
					os.RemoveAll(d)
				}
				os.Remove(filepath.Join(w.own(), "info", "alternates"))
			}
			if _, err := sandbox.ReleaseObjects(w.common(), "t1"); err != nil {
				t.Fatal(err)
			}
			if exists(w.own()) {
				t.Errorf("the task's object directory is still there")
			}
			if got := w.git(t, w.repo, "log", "--format=%s", branchA); got != "c6\nc5\nc4\nc3\nc2\nc1\nfirst" {
				t.Errorf("the task's history reads %q", got)
			}
			if got := w.git(t, w.repo, "rev-parse", branchA); got != tip {
				t.Errorf("branch at %s, want %s", got, tip)
			}
			w.clean(t, "after the release was finished")
		})
	}
}

// TestCorruptObjectNotMoved: an object file the task forged in its own
// directory (content not matching its name, or data after a valid object)
// is not moved into the shared store: dropped when its command ends.
func TestCorruptObjectNotMoved(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	forged := "0123456789abcdef0123456789abcdef01234567"
	res := w.sh(t, l, `git commit -q --allow-empty -m real && printf 'not an object' > "$GIT_OBJECT_DIRECTORY/01/23456789abcdef0123456789abcdef01234567"`)
	if res.ExitCode != 0 {
		t.Fatalf("%s", res.Output)
	}
	if exists(objectPath(filepath.Join(w.common(), "objects"), forged)) {
		t.Errorf("the forged object reached the shared store")
	}
	if n := w.ownObjects(t); n != 0 {
		t.Errorf("%d objects left in the task's directory, want the forged one dropped", n)
	}
	w.clean(t, "after the command")

	// A valid object followed by more data, which git refuses to read.
	res = w.killedAtEnd(t, l, `git commit -q --allow-empty -m padded && f="$GIT_OBJECT_DIRECTORY/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-)" && chmod u+w "$f" && printf 'tail' >> "$f" && printf 'not an object' > "$GIT_OBJECT_DIRECTORY/01/23456789abcdef0123456789abcdef01234567" && git rev-parse HEAD`)
	if res.ExitCode != 0 {
		t.Fatalf("%s", res.Output)
	}
	padded := strings.TrimSpace(res.Output)
	m, err := sandbox.SettleObjects(w.own())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m.Corrupt)
	if want := []string{forged, padded}; !slices.Equal(m.Corrupt, want) || m.Objects != 0 {
		t.Errorf("settled %+v, want %v refused", m, want)
	}
	if exists(objectPath(filepath.Join(w.common(), "objects"), padded)) {
		t.Errorf("the padded object reached the shared store")
	}
}

// TestObjectChangedAfterMove: the task keeps a writable descriptor of an
// object it wrote; once the object is moved into the shared store, writing
// through it changes the task's file, never the shared store's, which is
// the daemon's own copy.
func TestObjectChangedAfterMove(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	res := w.killedAtEnd(t, l, `git commit -q --allow-empty -m held && git rev-parse HEAD`)
	if res.ExitCode != 0 {
		t.Fatalf("%s", res.Output)
	}
	tip := strings.TrimSpace(res.Output)
	src := objectPath(w.own(), tip)
	if err := os.Chmod(src, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(src, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := sandbox.SettleObjects(w.own()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("garbage"), 0); err != nil {
		t.Fatal(err)
	}
	if got := w.git(t, w.repo, "log", "-1", "--format=%s", tip); got != "held" {
		t.Errorf("the moved commit reads %q", got)
	}
	w.clean(t, "after writing through the task's descriptor")
}

// ownObjects counts the files in t1's loose-object directories.
func (w *world) ownObjects(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(w.own(), "??", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// killedAtEnd runs command in the worktree through l as a command whose
// end the daemon never saw (killed with it): its objects stay in the
// task's directory, listed in the alternates.
func (w *world) killedAtEnd(t *testing.T, l *sandbox.Launcher, command string) proc.Result {
	t.Helper()
	c, err := l.Wrap(proc.Cmd{Dir: w.wt, Shell: command, Env: w.env}, sandbox.Task{Dir: w.wt, TempDir: w.tmp, Repo: w.repo, Branch: branchA})
	if err != nil {
		t.Fatal(err)
	}
	c.After = nil
	res, err := proc.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTaskWithoutObjectDirectory: a task provisioned before tasks had an
// object directory keeps committing (its loose objects go to the shared
// store, as they did).
func TestTaskWithoutObjectDirectory(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	if _, err := sandbox.ReleaseObjects(w.common(), "t1"); err != nil {
		t.Fatal(err)
	}
	res := w.sh(t, l, `test -z "$GIT_OBJECT_DIRECTORY" && git commit -q --allow-empty -m old && git rev-parse HEAD`)
	if res.ExitCode != 0 {
		t.Fatalf("commit without an object directory: %s", res.Output)
	}
	if !exists(objectPath(filepath.Join(w.common(), "objects"), strings.TrimSpace(res.Output))) {
		t.Errorf("the commit is not in the shared store")
	}
}

// TestWrapSetsObjectDirectory: every command wrapped for a task that has an
// object directory gets GIT_OBJECT_DIRECTORY, confined or not, and a value
// from the caller's environment is replaced.
func TestWrapSetsObjectDirectory(t *testing.T) {
	w := newWorld(t)
	task := sandbox.Task{Dir: w.wt, Repo: w.repo, Branch: branchA}
	for name, l := range map[string]*sandbox.Launcher{
		"confined":     {Exe: os.Args[0], Status: sandbox.Status{ABI: 1}, BranchDir: "neuraphage"},
		"not confined": {Status: sandbox.Status{Reason: "kernel lacks Landlock"}, BranchDir: "neuraphage"},
	} {
		c, err := l.Wrap(proc.Cmd{Shell: "true", Env: []string{"A=1", "GIT_OBJECT_DIRECTORY=/elsewhere", "GIT_ALTERNATE_OBJECT_DIRECTORIES=/else"}}, task)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"A=1", "GIT_OBJECT_DIRECTORY=" + w.own(), "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(w.common(), "objects")}
		if !slices.Equal(c.Env, want) {
			t.Errorf("%s: env %q, want %q", name, c.Env, want)
		}
	}
	l := &sandbox.Launcher{Exe: os.Args[0], Status: sandbox.Status{ABI: 1}, BranchDir: "neuraphage"}
	for _, other := range []sandbox.Task{
		{Dir: w.wtB, Repo: w.repo, Branch: branchB}, // no directory made
		{Dir: w.wt, Repo: w.repo, Branch: "neuraphage/t1"},
		{Dir: w.wt, Branch: branchA},
	} {
		c, _ := l.Wrap(proc.Cmd{Shell: "true", Env: []string{"A=1"}}, other)
		if !slices.Equal(c.Env, []string{"A=1"}) {
			t.Errorf("%+v: env %q, want it as it was", other, c.Env)
		}
	}
	if p := l.Policy(task); !slices.Equal(p.Objects, []string{w.own()}) {
		t.Errorf("policy objects %q, want the task's directory alone", p.Objects)
	}
}

// TestBeginEndConcurrently: commands of many tasks starting and ending at
// once each have their task's line in the shared alternates while they
// run, and none once all ended; a task with two commands keeps its line
// until the second ends; the user's own lines stay.
func TestBeginEndConcurrently(t *testing.T) {
	w := newWorld(t)
	alt := filepath.Join(w.common(), "objects", "info", "alternates")
	write(t, alt, "/users/own/objects\n")
	lines := func() []string {
		b, _ := os.ReadFile(alt)
		l := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(l)
		return l
	}
	var dirs []string
	for i := range 32 {
		d, err := sandbox.ProvideObjects(w.common(), fmt.Sprintf("c%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if err := sandbox.BeginObjects(w.own()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, d := range dirs {
		wg.Go(func() {
			if err := sandbox.BeginObjects(d); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	want := []string{"../neuraphage/objects/t1", "/users/own/objects"}
	for i := range 32 {
		want = append(want, fmt.Sprintf("../neuraphage/objects/c%02d", i))
	}
	slices.Sort(want)
	if got := lines(); !slices.Equal(got, want) {
		t.Errorf("alternates while the commands run:\n%q\nwant\n%q", got, want)
	}
	if err := sandbox.BeginObjects(w.own()); err != nil { // t1's second command
		t.Fatal(err)
	}
	for _, d := range dirs {
		wg.Go(func() {
			if _, err := sandbox.EndObjects(d); err != nil {
				errs <- err
			}
		})
	}
	if _, err := sandbox.EndObjects(w.own()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := lines(); !slices.Equal(got, []string{"../neuraphage/objects/t1", "/users/own/objects"}) {
		t.Errorf("alternates with t1's second command running: %q", got)
	}
	if _, err := sandbox.EndObjects(w.own()); err != nil {
		t.Fatal(err)
	}
	if got := lines(); !slices.Equal(got, []string{"/users/own/objects"}) {
		t.Errorf("alternates once every command ended: %q, want the user's line alone", got)
	}
}

// TestStashRefused: git stash cannot save in the sandbox (refs/stash is in
// the repository's own git directory, shared by every worktree), and the
// failure loses nothing of the worktree; the bash tool's deny-list refuses
// it first with the reason (internal/agent/tool).
func TestStashRefused(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	res := w.sh(t, l, `echo work > staged.txt && git add staged.txt && echo more >> README.md && git stash`)
	if res.ExitCode == 0 {
		t.Fatalf("git stash succeeded in the sandbox: %s", res.Output)
	}
	t.Logf("git stash: exit %d: %s", res.ExitCode, res.Output)
	if exists(filepath.Join(w.common(), "refs", "stash")) {
		t.Errorf("refs/stash was written")
	}
	if b, err := os.ReadFile(filepath.Join(w.wt, "staged.txt")); err != nil || string(b) != "work\n" {
		t.Errorf("the staged file after the failed stash: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.wt, "README.md")); string(b) != "hellomore\n" {
		t.Errorf("the changed file after the failed stash: %q", b)
	}
}
