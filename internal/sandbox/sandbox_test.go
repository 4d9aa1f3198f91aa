package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// TestMain makes the test binary its own launcher: run as
// `<test binary> sandbox-exec ...` it applies the policy and execs, as the
// neuraphage binary does.
func TestMain(m *testing.M) {
	sandbox.ServeLauncher()
	os.Exit(m.Run())
}

// world is a stand-in machine: a home with keys, a directory outside the
// task, a repository with the task's linked worktree, and the task's
// temporary directory. Another task, t2, has its own worktree on its own
// branch with a commit of its own, and a third, t3, a branch alone (its
// worktree removed): what task t1 must not touch.
type world struct {
	root, home, outside, repo, wt, wtB, tmp string
	env                                     []string
}

// The branches of the tasks, as the daemon names them (worktree.Branch).
const (
	branchA = "neuraphage/t1/work"
	branchB = "neuraphage/t2/work"
	branchC = "neuraphage/t3/work"
)

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		root: root, home: filepath.Join(root, "home"), outside: filepath.Join(root, "outside"),
		repo: filepath.Join(root, "repo"), wt: filepath.Join(root, "wt"), wtB: filepath.Join(root, "wtB"),
		tmp: filepath.Join(root, "run", "tmp", "t1"),
	}
	for p, content := range map[string]string{
		"home/.ssh/id_ed25519":  "SECRET KEY",
		"home/.aws/credentials": "SECRET AWS",
		"home/notes.txt":        "my notes",
		"home/project/main.go":  "package main",
		"outside/victim.txt":    "untouched",
		"outside/sub/deep.txt":  "untouched too",
		"repo/README.md":        "hello",
	} {
		write(t, filepath.Join(root, p), content)
	}
	goBin, _ := exec.LookPath("go")
	path := "/usr/local/bin:/usr/bin:/bin"
	if goBin != "" {
		path = filepath.Dir(goBin) + ":" + path
	}
	w.env = []string{
		"PATH=" + path, "HOME=" + w.home, "LANG=C",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"OUT=" + w.outside, "WT=" + w.wt, "REPO=" + w.repo,
		"B=" + branchB, "C=" + branchC,
	}
	w.git(t, w.repo, "init", "-q", "-b", "main")
	w.git(t, w.repo, "add", ".")
	w.git(t, w.repo, "commit", "-q", "-m", "first")
	// The history is packed, as in any repository that has seen a gc.
	w.git(t, w.repo, "repack", "-a", "-d", "-q")
	w.git(t, w.repo, "worktree", "add", "-q", "-b", branchA, w.wt)
	w.git(t, w.repo, "worktree", "add", "-q", "-b", branchB, w.wtB)
	w.git(t, w.wtB, "commit", "-q", "--allow-empty", "-m", "t2's work")
	w.git(t, w.repo, "branch", branchC, branchB)
	// Loose objects in the shared store, as any repository has: t2's
	// commit above, and a blob.
	write(t, filepath.Join(root, "blob.txt"), "a loose blob")
	w.git(t, w.repo, "hash-object", "-w", filepath.Join(root, "blob.txt"))
	// Task t1 has its own object directory, as provisioning makes it.
	if _, err := sandbox.ProvideObjects(filepath.Join(w.repo, ".git"), "t1"); err != nil {
		t.Fatal(err)
	}
	tmp, err := sandbox.TempDir(filepath.Dir(w.tmp), "t1")
	if err != nil || tmp != w.tmp {
		t.Fatalf("TempDir: %q, %v", tmp, err)
	}
	w.env = append(w.env, "TMPDIR="+w.tmp)
	return w
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git unconfined, as the test's own hand.
func (w *world) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	res, err := proc.Run(context.Background(), proc.Cmd{Dir: dir, Args: append([]string{"git"}, args...), Env: w.env})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("git %v: %v %s", args, err, res.Output)
	}
	return strings.TrimSpace(res.Output)
}

func (w *world) launcher(t *testing.T) *sandbox.Launcher {
	t.Helper()
	st := sandbox.Probe()
	if !st.Available() {
		t.Skipf("this kernel cannot confine commands (%s); the sandbox tests need Landlock", st)
	}
	return &sandbox.Launcher{
		Exe: os.Args[0], Status: st, Require: true, BranchDir: "neuraphage",
		DenyRead: sandbox.HomeDenyRead(w.home, filepath.Join(w.root, "run")),
	}
}

// sh runs command in the worktree through l.
func (w *world) sh(t *testing.T, l *sandbox.Launcher, command string) proc.Result {
	t.Helper()
	return w.shOn(t, l, branchA, command)
}

// shOn runs command in the worktree through l, for a task on branch.
func (w *world) shOn(t *testing.T, l *sandbox.Launcher, branch, command string) proc.Result {
	t.Helper()
	c, err := l.Wrap(proc.Cmd{Dir: w.wt, Shell: command, Env: w.env}, sandbox.Task{Dir: w.wt, TempDir: w.tmp, Repo: w.repo, Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	res, err := proc.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// snapshot records every path under dirs with its mode and content.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			v := fi.Mode().String()
			if fi.Mode().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				v += " " + string(b)
			}
			out[p] = v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// contents drops the modes from a snapshot: Landlock does not control
// chmod, so a command may change a pack's mode, never its content.
func contents(snap map[string]string) map[string]string {
	out := map[string]string{}
	for p, v := range snap {
		_, c, _ := strings.Cut(v, " ")
		out[p] = c
	}
	return out
}

func diff(before, after map[string]string) []string {
	var d []string
	for p, v := range before {
		if a, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		} else if a != v {
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	return d
}

// TestEscapes runs each way out of the worktree through the real sandbox:
// each must fail, and the home, the outside directory and the repository's
// branches must be as they were.
func TestEscapes(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	write(t, filepath.Join(w.wt, "mine.txt"), "task file")
	cases := []struct {
		name, cmd string
		before    string // run first, in the sandbox, and allowed to succeed
		needs     string // a program the case needs
	}{
		{name: "rm home through cd", cmd: `cd ~ && rm -rf ./*`},
		{name: "rm home dotfiles", cmd: `cd ~ && rm -rf .ssh .aws notes.txt`},
		{name: "find delete", cmd: `find ~ -mindepth 1 -delete`},
		{name: "rm through a variable", cmd: `H=~; rm -rf $H`},
		{name: "touch in parent", cmd: `cd .. && touch x`},
		{name: "cp out", cmd: `cp mine.txt "$OUT/copied.txt"`},
		{name: "overwrite outside", cmd: `echo pwned > "$OUT/victim.txt"`},
		{name: "python write", cmd: `python3 -c "open('$OUT/py.txt','w').write('x')"`, needs: "python3"},
		{name: "perl write", cmd: `perl -e 'open(my $f, ">", "$ENV{OUT}/pl.txt") or die "open: $!"'`, needs: "perl"},
		{name: "node write", cmd: `node -e 'require("fs").writeFileSync(process.env.OUT + "/node.txt", "x")'`, needs: "node"},
		{name: "symlink out then write", cmd: `ln -s "$OUT/victim.txt" link && echo pwned > link`},
		{name: "symlinked dir out then write", cmd: `ln -s "$OUT" out && echo pwned > out/new.txt`},
		{name: "hard link out then write", cmd: `ln "$OUT/victim.txt" hard && echo pwned >> hard`},
		{name: "proc self root", cmd: `echo pwned > "/proc/self/root$OUT/victim.txt"`},
		{name: "git -C main repo commit", cmd: `git -C "$REPO" commit -q --allow-empty -m evil`},
		{name: "git -C .. branch", cmd: `git -C "$REPO" branch evil`},
		{name: "git move main from the worktree", cmd: `git update-ref refs/heads/main HEAD~0^{tree} 2>&1 || git branch -f main HEAD`},
		{name: "git config of the repository", cmd: `git config core.hooksPath /tmp/evil`},
		// The worktree's .git file and its git directory's HEAD are the
		// task's to change: what they say must not widen the next command.
		// The next command must not be widened by what they say.
		{name: "repoint .git outside, then write there", before: `printf 'gitdir: %s\n' "$OUT" > .git`, cmd: `echo pwned > "$OUT/victim.txt"`},
		{name: "repoint .git at the repository, then write there", before: `printf 'gitdir: %s\n' "$REPO/.git" > .git`, cmd: `echo pwned > "$REPO/.git/config"`},
		{name: "HEAD on main, then commit", before: `echo 'ref: refs/heads/main' > "$REPO/.git/worktrees/wt/HEAD"`, cmd: `git commit -q --allow-empty -m evil`},
		{name: "HEAD on another task's branch, then commit", before: `echo "ref: refs/heads/$B" > "$REPO/.git/worktrees/wt/HEAD"`, cmd: `git commit -q --allow-empty -m evil`},
		// The shared object store, packs and loose objects alike, may be
		// neither removed nor changed: the task writes objects in its own
		// directory (objectCases).
		{name: "rm a pack", cmd: `rm -f "$REPO"/.git/objects/pack/*`},
		{name: "rm the pack directory", cmd: `rm -rf "$REPO/.git/objects/pack"`},
		{name: "move the pack directory away", cmd: `mv "$REPO/.git/objects/pack" "$REPO/.git/objects/00/pack"`},
		{name: "chmod and truncate a pack", cmd: `for p in "$REPO"/.git/objects/pack/*.pack; do chmod u+w "$p" && : > "$p" || exit 1; done`},
		{name: "hard link a pack into a loose directory, then truncate it", cmd: `for p in "$REPO"/.git/objects/pack/*.pack; do ln "$p" "$REPO/.git/objects/00/p" && chmod u+w "$REPO/.git/objects/00/p" && : > "$REPO/.git/objects/00/p" || exit 1; done`},
		{name: "replace a pack by a new one", cmd: `for p in "$REPO"/.git/objects/pack/*.pack; do cp "$p" "$TMPDIR/p" && : > "$TMPDIR/p" && mv -f "$TMPDIR/p" "$p" || exit 1; done`},
		{name: "git repack -a -d", cmd: `git repack -a -d -q`},
		{name: "git gc --prune=now", cmd: `git gc -q --prune=now`},
		{name: "read a key", cmd: `cat ~/.ssh/id_ed25519`},
		{name: "read the daemon's memory", cmd: `head -c 16 /proc/$PPID/mem`},
		{name: "read aws credentials", cmd: `cat ~/.aws/credentials`},
		{name: "copy a key in", cmd: `cp ~/.ssh/id_ed25519 ./stolen`},
		{name: "read the run directory", cmd: `ls "$TMPDIR/../.."/* >/dev/null && cat "$REPO/../run/secret"`},
	}
	for _, c := range slices.Concat(otherBranchCases, objectCases) {
		cases = append(cases, struct{ name, cmd, before, needs string }{name: c.name, cmd: c.cmd})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != "" {
				if _, err := exec.LookPath(tc.needs); err != nil {
					t.Skipf("%s is not installed", tc.needs)
				}
			}
			write(t, filepath.Join(w.root, "run", "secret"), "SECRET RUN")
			before := snapshot(t, w.home, w.outside, filepath.Join(w.root, "run", "secret"))
			store := w.store(t)
			main := w.git(t, w.repo, "rev-parse", "main")
			branches := w.git(t, w.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
			others := w.others(t)
			cfg, _ := os.ReadFile(filepath.Join(w.repo, ".git", "config"))
			if tc.before != "" {
				dotGit, _ := os.ReadFile(filepath.Join(w.wt, ".git"))
				head, _ := os.ReadFile(filepath.Join(w.repo, ".git", "worktrees", "wt", "HEAD"))
				t.Cleanup(func() {
					write(t, filepath.Join(w.wt, ".git"), string(dotGit))
					write(t, filepath.Join(w.repo, ".git", "worktrees", "wt", "HEAD"), string(head))
				})
				if res := w.sh(t, l, tc.before); res.ExitCode != 0 {
					t.Fatalf("%s: %s", tc.before, res.Output)
				}
			}
			res := w.sh(t, l, tc.cmd)
			if res.ExitCode == 0 {
				t.Errorf("%s: exit 0, want a failure; output:\n%s", tc.cmd, res.Output)
			}
			if strings.Contains(res.Output, sandbox.Command) {
				t.Errorf("%s: the launcher failed, the sandbox was not what refused:\n%s", tc.cmd, res.Output)
			}
			t.Logf("%s: exit %d: %s", tc.cmd, res.ExitCode, res.Output)
			if strings.Contains(res.Output, "SECRET") {
				t.Errorf("%s: output shows a secret:\n%s", tc.cmd, res.Output)
			}
			if d := diff(before, snapshot(t, w.home, w.outside, filepath.Join(w.root, "run", "secret"))); len(d) > 0 {
				t.Errorf("%s: the outside changed: %v", tc.cmd, d)
			}
			if d := w.storeDiff(t, store, w.store(t)); len(d) > 0 {
				t.Errorf("%s: the shared object store changed: %v", tc.cmd, d)
			}
			if got := w.git(t, w.repo, "rev-parse", "main"); got != main {
				t.Errorf("%s: main moved from %s to %s", tc.cmd, main, got)
			}
			if got := w.git(t, w.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"); got != branches {
				t.Errorf("%s: branches changed:\n%s\nwant\n%s", tc.cmd, got, branches)
			}
			if d := diff(others, w.others(t)); len(d) > 0 {
				t.Errorf("%s: the other tasks' branches or reflogs changed: %v", tc.cmd, d)
			}
			if got, _ := os.ReadFile(filepath.Join(w.repo, ".git", "config")); string(got) != string(cfg) {
				t.Errorf("%s: the repository's config changed", tc.cmd)
			}
			if _, err := os.Stat(filepath.Join(w.wt, "stolen")); err == nil {
				if b, _ := os.ReadFile(filepath.Join(w.wt, "stolen")); strings.Contains(string(b), "SECRET") {
					t.Errorf("%s: a key was copied into the worktree", tc.cmd)
				}
			}
		})
	}
}

// TestBackgroundProcessOutlivingTheCall: a process that leaves the
// command's group and writes after the call returned is confined too.
func TestBackgroundProcessOutlivingTheCall(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	// The call returns once the job has left its group (it writes
	// bg-started after setsid), so killing the group does not reach it.
	res := w.sh(t, l, `setsid sh -c 'touch "$WT/bg-started"; sleep 0.2; echo pwned > "$OUT/late.txt"; echo $? > "$WT/bg-done"' >/dev/null 2>&1 < /dev/null &
while [ ! -e "$WT/bg-started" ]; do sleep 0.01; done`)
	if res.ExitCode != 0 {
		t.Fatalf("starting the background job: exit %d: %s", res.ExitCode, res.Output)
	}
	testkit.WaitFor(t, "the background job to finish", func() bool {
		_, err := os.Stat(filepath.Join(w.wt, "bg-done"))
		return err == nil
	})
	testkit.WaitFor(t, "the background job to write its status", func() bool {
		b, _ := os.ReadFile(filepath.Join(w.wt, "bg-done"))
		return strings.TrimSpace(string(b)) != ""
	})
	if b, _ := os.ReadFile(filepath.Join(w.wt, "bg-done")); strings.TrimSpace(string(b)) == "0" {
		t.Errorf("the late write succeeded")
	}
	if _, err := os.Stat(filepath.Join(w.outside, "late.txt")); err == nil {
		t.Errorf("the background job wrote outside the worktree after the call")
	}
}

// TestWorkInside: what a task does in its worktree works under the sandbox.
func TestWorkInside(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	others := w.others(t)
	for _, tc := range []struct{ name, cmd, want string }{
		{"write and read", `echo hi > a.txt && mkdir -p d/e && cp a.txt d/e/b.txt && cat d/e/b.txt`, "hi"},
		{"move between directories", `mkdir -p x y && echo m > x/f && mv x/f y/f && cat y/f`, "m"},
		{"remove what it made", `mkdir -p gone/deep && touch gone/deep/f && rm -rf gone && echo ok`, "ok"},
		{"dev null", `echo hidden > /dev/null && echo shown 2>/dev/null`, "shown"},
		{"tmpdir", `f=$(mktemp) && echo t > "$f" && cat "$f" && rm "$f"`, "t"},
		{"read outside", `cat "$OUT/victim.txt" ~/notes.txt`, "untouchedmy notes"},
		{"list home", `ls ~`, "notes.txt"},
		{"list a key's directory, names only", `ls ~/.ssh`, "id_ed25519"},
		{"git commit in the worktree", `echo c > c.txt && git add c.txt && git commit -q -m "task work" && git log --format=%s -1`, "task work"},
		{"git status", `git status --short && echo clean`, "clean"},
		{"git commit again, amend, reset", `echo s >> c.txt && git commit -qam wip && git commit -q --amend -m more && git reset -q --soft HEAD && git log --format=%s -1`, "more"},
		{"git reset moves the branch back", `git commit -q --allow-empty -m throwaway && git reset -q --hard HEAD~1 && git log --format=%s -1`, "more"},
		{"git log reads packed history", `git log --format=%s | tail -1`, "first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.sh(t, l, tc.cmd)
			if res.ExitCode != 0 || !strings.Contains(strings.ReplaceAll(res.Output, "\n", ""), tc.want) {
				t.Errorf("%s: exit %d, output:\n%s\nwant %q in it", tc.cmd, res.ExitCode, res.Output, tc.want)
			}
		})
	}
	if got := w.git(t, w.repo, "log", "--format=%s", "-2", branchA); got != "more\ntask work" {
		t.Errorf("the task's branch holds %q, want its commit", got)
	}
	if got := w.git(t, w.repo, "reflog", "--format=%gs", "-1", branchA); !strings.HasPrefix(got, "reset:") {
		t.Errorf("the task's reflog ends with %q, want its reset", got)
	}
	others["branches"] = strings.Replace(others["branches"], "refs/heads/"+branchA+" "+w.git(t, w.repo, "rev-parse", "main"), "refs/heads/"+branchA+" "+w.git(t, w.repo, "rev-parse", branchA), 1)
	if d := diff(others, w.others(t)); len(d) > 0 {
		t.Errorf("the other tasks' branches changed: %v", d)
	}
}

// TestCommitAfterPackRefs: the user's `git pack-refs --all` removes the
// task's loose ref and its directory; the next command of the task is
// granted the directory again (made by the launcher before the sandbox is
// applied) and commits, and still cannot touch another task's branch,
// packed now.
func TestCommitAfterPackRefs(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	if res := w.sh(t, l, `git commit -q --allow-empty -m before`); res.ExitCode != 0 {
		t.Fatalf("commit before pack-refs: %s", res.Output)
	}
	w.git(t, w.repo, "pack-refs", "--all")
	refDir := filepath.Join(w.repo, ".git", "refs", "heads", "neuraphage", "t1")
	if _, err := os.Stat(filepath.Join(refDir, "work")); !os.IsNotExist(err) {
		t.Fatalf("the loose ref is still there after pack-refs --all (%v)", err)
	}
	_, err := os.Stat(refDir)
	t.Logf("after pack-refs --all, the ref directory: %v", err)
	others := w.others(t)
	res := w.sh(t, l, `git commit -q --allow-empty -m after && git commit -q --amend --allow-empty -m amended && git log --format=%s -1`)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "amended") {
		t.Fatalf("commit after pack-refs: exit %d: %s", res.ExitCode, res.Output)
	}
	if got := w.git(t, w.repo, "log", "--format=%s", "-2", branchA); got != "amended\nbefore" {
		t.Errorf("the task's branch holds %q, want its commits", got)
	}
	others["branches"] = w.git(t, w.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
	for _, cmd := range []string{`git update-ref refs/heads/$B HEAD`, `git branch -f $C HEAD`, `git update-ref -d refs/heads/$C`} {
		if res := w.sh(t, l, cmd); res.ExitCode == 0 {
			t.Errorf("%s: exit 0 on a packed branch, want a failure: %s", cmd, res.Output)
		}
	}
	if d := diff(others, w.others(t)); len(d) > 0 {
		t.Errorf("the other tasks' packed branches changed: %v", d)
	}
}

// TestLegacyFlatBranch: a task provisioned before branches had a directory
// each is on neuraphage/<id>; it keeps committing, through the grant of
// the directory all task branches share (which docs/sandbox.md names as
// what such a task can still reach).
func TestLegacyFlatBranch(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	w.git(t, w.wt, "switch", "-q", "-c", "neuraphage/t0")
	res := w.shOn(t, l, "neuraphage/t0", `git commit -q --allow-empty -m legacy && git log --format=%s -1`)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "legacy") {
		t.Fatalf("commit on a flat task branch: exit %d: %s", res.ExitCode, res.Output)
	}
	// Named as the daemon names the branches of new tasks, the same
	// worktree's branch is refused: the grant follows the recorded
	// branch, not what the worktree has checked out.
	if res := w.shOn(t, l, branchA, `git commit -q --allow-empty -m again`); res.ExitCode == 0 {
		t.Errorf("a commit on neuraphage/t0 succeeded with t1's grant: %s", res.Output)
	}
}

func TestRefDir(t *testing.T) {
	l := &sandbox.Launcher{BranchDir: "neuraphage"}
	for branch, want := range map[string]string{
		"neuraphage/t-abcde/work": "neuraphage/t-abcde",
		"neuraphage/t-abcde":      "neuraphage", // named before branches had a directory each
		"neuraphage":              "",
		"main":                    "",
		"feature/x":               "",
		"neuraphagex/t-abcde":     "",
		"neuraphage/../main":      "",
		"neuraphage//t-abcde/w":   "",
		"/neuraphage/t-abcde/w":   "",
		"":                        "",
	} {
		if got := l.RefDir(branch); got != want {
			t.Errorf("RefDir(%q) = %q, want %q", branch, got, want)
		}
	}
	if got := (&sandbox.Launcher{}).RefDir("neuraphage/t-abcde/work"); got != "" {
		t.Errorf("RefDir without BranchDir = %q, want none", got)
	}
}

// TestGoBuildInside: go build works in the worktree when the build cache is
// a path the user added.
func TestGoBuildInside(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	w := newWorld(t)
	l := w.launcher(t)
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skip("no go build cache")
	}
	cache := strings.TrimSpace(string(out))
	l.Write = []string{cache}
	w.env = append(w.env, "GOCACHE="+cache, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPATH="+filepath.Join(w.tmp, "gopath"))
	write(t, filepath.Join(w.wt, "go.mod"), "module example.com/hello\n\ngo 1.22\n")
	write(t, filepath.Join(w.wt, "main.go"), "package main\n\nfunc main() { println(\"built\") }\n")
	res := w.sh(t, l, `go build -o hello . && ./hello`)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "built") {
		t.Errorf("go build: exit %d:\n%s", res.ExitCode, res.Output)
	}
}

// TestNetwork: deny refuses a connection to a local listener; a ports list
// lets through only its ports.
func TestNetwork(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	if l.Status.ABI < sandbox.TCP {
		t.Skipf("Landlock ABI v%d cannot restrict TCP (needs v%d)", l.Status.ABI, sandbox.TCP)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	listen := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().(*net.TCPAddr).Port
	}
	open, closed := listen(), listen()
	connect := func(port int) string {
		return fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('127.0.0.1', %d), timeout=30).close(); print('connected')"`, port)
	}
	if res := w.sh(t, l, connect(open)); res.ExitCode != 0 {
		t.Fatalf("network allow: %s", res.Output)
	}
	l.Network = sandbox.Network{Deny: true}
	if res := w.sh(t, l, connect(open)); res.ExitCode == 0 || strings.Contains(res.Output, "connected") {
		t.Errorf("network deny: connected:\n%s", res.Output)
	}
	l.Network = sandbox.Network{Ports: []uint16{uint16(open)}}
	if res := w.sh(t, l, connect(open)); res.ExitCode != 0 {
		t.Errorf("ports %d: the allowed port refused:\n%s", open, res.Output)
	}
	if res := w.sh(t, l, connect(closed)); res.ExitCode == 0 {
		t.Errorf("ports %d: port %d connected:\n%s", open, closed, res.Output)
	}
}

// TestRequire: without Landlock, Require refuses and the default runs the
// command as it is.
func TestRequire(t *testing.T) {
	c := proc.Cmd{Shell: "true"}
	off := &sandbox.Launcher{Status: sandbox.Status{Reason: "kernel lacks Landlock"}}
	if got, err := off.Wrap(c, sandbox.Task{Dir: "/w"}); err != nil || got.Shell != "true" || got.Args != nil {
		t.Errorf("unavailable, not required: %+v, %v; want the command as it is", got, err)
	}
	off.Require = true
	if _, err := off.Wrap(c, sandbox.Task{Dir: "/w"}); err == nil || !strings.Contains(err.Error(), "kernel lacks Landlock") {
		t.Errorf("unavailable, required: %v; want a refusal saying why", err)
	}
	var none *sandbox.Launcher
	if got, err := none.Wrap(c, sandbox.Task{Dir: "/w"}); err != nil || got.Shell != "true" {
		t.Errorf("nil launcher: %+v, %v", got, err)
	}
}

// TestLauncherRefusesBadArgs: the launcher runs nothing it cannot confine.
func TestLauncherRefusesBadArgs(t *testing.T) {
	for _, args := range [][]string{
		{"--write", "relative", "--", "true"},
		{"--net", "nope", "--", "true"},
		{"--net", "0", "--", "true"},
		{"--write", "/tmp"},
		{"--objects", "repo/.git/objects", "--", "true"},
	} {
		if _, _, err := sandbox.ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) = nil error", args)
		}
	}
	p, argv, err := sandbox.ParseArgs(sandbox.Policy{Write: []string{"/a"}, Objects: []string{"/r/.git/objects"}, DenyRead: []string{"/b"}, Network: sandbox.Network{Ports: []uint16{80, 443}}}.Args("sh", "-c", "x"))
	if err != nil || p.Network.String() != "80,443" || p.Write[0] != "/a" || p.Objects[0] != "/r/.git/objects" || p.DenyRead[0] != "/b" || strings.Join(argv, " ") != "sh -c x" {
		t.Errorf("round trip: %+v %q %v", p, argv, err)
	}
}

func TestStatusString(t *testing.T) {
	for _, tc := range []struct {
		st   sandbox.Status
		want string
	}{
		{sandbox.Status{ABI: 6}, "landlock v6 (fs, tcp)"},
		{sandbox.Status{ABI: 3}, "landlock v3 (fs; network not restricted: needs v4)"},
		{sandbox.Status{Reason: "kernel lacks Landlock"}, "none — kernel lacks Landlock; deny-list only"},
		{sandbox.Status{ABI: 7, Off: true}, "off — sandbox.enabled is false; deny-list only"},
	} {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.st, got, tc.want)
		}
	}
}
