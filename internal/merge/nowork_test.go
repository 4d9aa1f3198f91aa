package merge_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestNoWorkLost drives the queue, the worktree manager, agents and a user
// through random steps and checks after them that no commit and no file
// content anyone wrote is lost, and that the user's uncommitted edit in the
// checkout of main is never touched.
func TestNoWorkLost(t *testing.T) {
	seeds := []int64{1, 2, 3, 4, 5, 6, time.Now().UnixNano()}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %d", seed)
			newWorld(t, seed).run(60)
		})
	}
}

// content is a file content someone wrote and did not commit.
type content struct {
	task task.ID // "" for the user's checkout
	dir  string
	file string
	data string
}

// made is a commit someone made.
type made struct {
	sha    string
	onMain bool     // a user's commit on main: never rewritten
	tokens []string // contents it holds
	what   string
}

type world struct {
	t        *testing.T
	e        *env
	rng      *rand.Rand
	strategy string
	tokens   int
	maxTasks int

	tasks       []task.ID
	commits     []made
	uncommitted []content
	userDirty   string // the user's uncommitted README, "" when none
	log         []string
	repairs     []string // what a stopped daemon's git left (none expected), repaired by hand
	mainFiles   []string // the files on main at the last check: nobody deletes any
}

func newWorld(t *testing.T, seed int64) *world {
	rng := rand.New(rand.NewSource(seed))
	strategy := []string{merge.Rebase, merge.Merge, merge.Squash}[rng.Intn(3)]
	cfg := merge.Config{Strategy: strategy, MaxSendBacks: rng.Intn(3), Cleanup: rng.Intn(2) == 0, Retry: 50 * time.Millisecond}
	w := &world{t: t, rng: rng, strategy: strategy, maxTasks: 4 + rng.Intn(3)}
	w.e = newMergeEnv(t, cfg)
	w.e.start()
	w.logf("config %+v, up to %d tasks", cfg, w.maxTasks)
	return w
}

func (w *world) logf(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf(format, args...))
}

func (w *world) token() string {
	w.tokens++
	return fmt.Sprintf("token-%d-%d\n", w.rng.Int63(), w.tokens)
}

var sharedFiles = []string{"a.txt", "b.txt", "shared.txt", "dir/c.txt"}

func (w *world) run(steps int) {
	t := w.t
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("steps:\n%s", strings.Join(w.log, "\n"))
		}
	}()
	for i := range steps {
		w.step(i)
		w.checkUserEdit()
		if i%10 == 9 {
			w.settle()
			w.check(fmt.Sprintf("after step %d", i))
			if t.Failed() {
				return
			}
		}
	}
	w.settle()
	w.check("at the end")
	if len(w.repairs) > 0 {
		t.Errorf("a stopped daemon's git left %d thing(s) to repair by hand (git commands that write must run to their end):\n%s", len(w.repairs), strings.Join(w.repairs, "\n"))
	}
	// The user cleans the checkout: everything still open lands or closes.
	if w.userDirty != "" {
		w.e.git(w.e.repo, "checkout", "--", "README")
		w.userDirty = ""
		w.logf("user reverts README")
	}
	w.settle()
	w.check("after the user cleaned up")
	open, err := w.e.st.ListMerges(w.e.ctx, store.MergeQuery{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("open entries with a clean checkout: %+v", open)
	}
	all, err := w.e.st.ListMerges(w.e.ctx, store.MergeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		w.logf("entry %d %s %s: %s", m.ID, m.TaskID, m.State, m.Detail)
	}
}

func (w *world) statuses(ok ...task.Status) []task.ID {
	var out []task.ID
	for _, id := range w.tasks {
		if slices.Contains(ok, w.e.task(id).Status) {
			out = append(out, id)
		}
	}
	return out
}

func (w *world) pick(ids []task.ID) (task.ID, bool) {
	if len(ids) == 0 {
		return "", false
	}
	return ids[w.rng.Intn(len(ids))], true
}

func (w *world) wtPath(id task.ID) string {
	rec, err := w.e.st.GetWorktree(w.e.ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return rec.Path
}

// running picks a task an agent works on: running, or brought back to
// running from queued (sent back) or paused (resumed by the user).
func (w *world) running() (task.ID, bool) {
	id, ok := w.pick(w.statuses(task.Running, task.Queued, task.Paused))
	if !ok {
		return "", false
	}
	tk := w.e.task(id)
	if tk.Status == task.Paused {
		w.move(id, task.Queued)
	}
	if tk.Status != task.Running {
		if !w.move(id, task.Running) {
			return "", false
		}
		w.logf("  %s runs again (was %s)", id, tk.Status)
	}
	// The executor provisions the worktree before each run (it recreates
	// one whose directory is missing).
	if _, err := w.e.wt.Provision(w.e.ctx, w.e.task(id)); err != nil {
		w.t.Fatalf("provision %s: %v", id, err)
	}
	return id, true
}

func (w *world) move(id task.ID, to task.Status) bool {
	_, _, err := w.e.st.UpdateTask(w.e.ctx, id, store.Transition(to, "test", time.Now()))
	return err == nil
}

func (w *world) step(i int) {
	e := w.e
	switch r := w.rng.Intn(100); {
	case r < 12 && len(w.tasks) < w.maxTasks || len(w.tasks) == 0:
		tk, _ := e.newTask(fmt.Sprintf("task %d", len(w.tasks)))
		w.tasks = append(w.tasks, tk.ID)
		w.logf("%d: create %s", i, tk.ID)
	case r < 35: // an agent edits a file, leaving it uncommitted
		id, ok := w.running()
		if !ok {
			return
		}
		dir := w.wtPath(id)
		file := sharedFiles[w.rng.Intn(len(sharedFiles))]
		if w.rng.Intn(4) == 0 {
			file = fmt.Sprintf("own-%s-%d.txt", id, w.rng.Intn(3))
		}
		data := w.token()
		// The agent's own overwrite supersedes what it wrote before.
		w.uncommitted = slices.DeleteFunc(w.uncommitted, func(c content) bool { return c.task == id && c.file == file })
		e.write(dir, file, data)
		w.uncommitted = append(w.uncommitted, content{task: id, dir: dir, file: file, data: data})
		w.logf("%d: %s edits %s", i, id, file)
	case r < 48: // an agent commits
		id, ok := w.running()
		if !ok {
			return
		}
		dir := w.wtPath(id)
		if e.status(dir) == "" {
			return
		}
		var toks []string
		for _, c := range w.uncommitted {
			if c.task == id {
				toks = append(toks, c.data)
			}
		}
		e.git(dir, "add", "-A")
		e.git(dir, "commit", "-q", "-m", fmt.Sprintf("agent commit %d", i))
		sha := e.rev(dir, "HEAD")
		w.commits = append(w.commits, made{sha: sha, tokens: toks, what: fmt.Sprintf("%s's commit at step %d", id, i)})
		w.logf("%d: %s commits %s", i, id, sha[:8])
	case r < 62: // an agent completes
		id, ok := w.pick(w.statuses(task.Running))
		if !ok {
			return
		}
		e.q.Complete(e.ctx, id, fmt.Sprintf("work of %s at step %d", id, i), true)
		w.logf("%d: %s completes", i, id)
	case r < 67: // the user cancels a task
		id, ok := w.pick(w.statuses(task.Running, task.Queued, task.Paused, task.Merging))
		if !ok {
			return
		}
		w.logf("%d: cancel %s (%s): %v", i, id, w.e.task(id).Status, w.move(id, task.Cancelled))
	case r < 72: // the user enqueues by hand
		id, ok := w.pick(w.statuses(task.Paused, task.Cancelled, task.Completed))
		if !ok {
			return
		}
		_, err := e.q.Enqueue(e.ctx, id)
		w.logf("%d: enqueue %s: %v", i, id, err)
	case r < 77:
		res, err := e.wt.Prune(e.ctx)
		if err != nil {
			w.t.Fatalf("prune: %v", err)
		}
		w.logf("%d: prune: %+v", i, res)
	case r < 82:
		e.stop()
		w.afterKill(i)
		e.restart()
		w.logf("%d: daemon restart", i)
	case r < 92: // the user commits on main, in the checkout
		if b := e.git(e.repo, "symbolic-ref", "--short", "HEAD"); b != "main" {
			w.t.Fatalf("the user's checkout is on %q", b)
		}
		file := sharedFiles[w.rng.Intn(len(sharedFiles))]
		data := w.token()
		e.write(e.repo, file, data)
		e.git(e.repo, "add", "--", file)
		out, err := gitTry(e.repo, "commit", "-q", "-m", fmt.Sprintf("user commit %d", i), "--", file)
		if err != nil {
			// Only a landing between the write and the commit could be in
			// the way; the user's content is still on disk then.
			w.logf("%d: user commit failed: %v %s", i, err, out)
			w.uncommitted = append(w.uncommitted, content{dir: e.repo, file: file, data: data})
			return
		}
		sha := e.rev(e.repo, "HEAD")
		w.commits = append(w.commits, made{sha: sha, onMain: true, tokens: []string{data}, what: fmt.Sprintf("user commit at step %d", i)})
		w.logf("%d: user commits %s on main (%s)", i, sha[:8], file)
	default: // the user starts or stops editing README in the checkout
		if w.userDirty == "" {
			w.userDirty = "the user's unsaved " + w.token()
			e.write(e.repo, "README", w.userDirty)
			w.logf("%d: user edits README", i)
		} else {
			w.checkUserEdit()
			e.git(e.repo, "checkout", "--", "README")
			w.userDirty = ""
			w.logf("%d: user reverts README", i)
		}
	}
}

func (w *world) checkUserEdit() {
	w.t.Helper()
	if w.userDirty == "" {
		return
	}
	if got := w.e.read(w.e.repo, "README"); got != w.userDirty {
		w.t.Fatalf("the user's uncommitted README changed: %q, want %q", got, w.userDirty)
	}
}

// settle waits until the queue has nothing to do: no open entry, or the
// first one waits for the user's dirty checkout.
func (w *world) settle() {
	w.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		open, err := w.e.st.ListMerges(w.e.ctx, store.MergeQuery{Open: true})
		if err != nil {
			w.t.Fatal(err)
		}
		if len(open) == 0 || w.userDirty != "" && open[0].State == store.MergeWaiting {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			w.t.Logf("goroutines:\n%s", buf)
			ps, _ := exec.Command("sh", "-c", `ps -eo pid,ppid,stat,etime,args --forest | grep -A3 -B3 git; find "$0" -name '*.lock'`, filepath.Dir(w.e.repo)).CombinedOutput()
			w.t.Logf("processes:\n%s", ps)
			w.t.Logf("log:\n%s", w.e.logs.String())
			w.t.Fatalf("the queue did not settle: %+v", open)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *world) check(when string) {
	t := w.t
	t.Helper()
	e := w.e
	commits, blobs := reachable(t, e.repo)
	for _, c := range w.commits {
		if commits[c.sha] {
			continue
		}
		if !c.onMain && w.strategy == merge.Rebase {
			// A rebase rewrites the task's commits: their contents must
			// still be reachable.
			for _, tok := range c.tokens {
				if !bytes.Contains(blobs, []byte(tok)) && !w.onDisk(tok) {
					t.Errorf("%s: %s (%s) was rebased away and its content %q is gone", when, c.what, c.sha, tok)
				}
			}
			continue
		}
		t.Errorf("%s: %s (%s) is not reachable from any ref", when, c.what, c.sha)
	}
	evs, err := e.st.ReadEvents(e.ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindCommitMade)}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		cm := ev.Payload.(event.CommitMade)
		if !commits[cm.Commit] && w.strategy != merge.Rebase {
			t.Errorf("%s: %s's commit %s (%s) is not reachable from any ref", when, ev.TaskID, cm.Commit, cm.Message)
		}
	}
	for _, c := range w.uncommitted {
		b, err := os.ReadFile(filepath.Join(c.dir, c.file))
		if err == nil && string(b) == c.data {
			continue
		}
		if bytes.Contains(blobs, []byte(c.data)) {
			continue
		}
		t.Errorf("%s: %q written to %s in %s (task %q) is neither on disk nor in any reachable commit", when, c.data, c.file, c.dir, c.task)
	}
	w.checkUserEdit()
	files := strings.Fields(e.git(e.repo, "ls-tree", "-r", "--name-only", "main"))
	for _, f := range w.mainFiles {
		if !slices.Contains(files, f) {
			t.Errorf("%s: %s was deleted from main (%s)", when, f, e.git(e.repo, "log", "-3", "--stat", "--format=%h %s", "main"))
		}
	}
	w.mainFiles = files
}

// onDisk reports whether some tracked uncommitted content is tok and still
// on disk.
func (w *world) onDisk(tok string) bool {
	for _, c := range w.uncommitted {
		if c.data == tok {
			if b, err := os.ReadFile(filepath.Join(c.dir, c.file)); err == nil && string(b) == tok {
				return true
			}
		}
	}
	return false
}

// reachable returns the commits reachable from any ref (or worktree HEAD)
// and the contents of every blob in them, concatenated.
func reachable(t *testing.T, repo string) (map[string]bool, []byte) {
	t.Helper()
	// Every ref (branches, archives) and the checkout's HEAD. Not
	// `rev-list --all`: that reads every worktree's HEAD too, and fails
	// on a worktree being added or removed right now.
	refs, err := gitTry(repo, "for-each-ref", "--format=%(objectname)")
	if err != nil {
		t.Fatal(err)
	}
	tips := append(strings.Fields(refs), "HEAD")
	revList := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"rev-list", "--stdin"}, args...)...)
		cmd.Dir = repo
		cmd.Stdin = strings.NewReader(strings.Join(tips, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rev-list %v: %v", args, err)
		}
		return string(out)
	}
	commits := map[string]bool{}
	for _, c := range strings.Fields(revList()) {
		commits[c] = true
	}
	objs := revList("--objects", "--filter=object:type=blob", "--filter-provided-objects", "--no-object-names")
	var blobList []string
	for _, o := range strings.Fields(objs) {
		if !commits[o] {
			blobList = append(blobList, o)
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = repo
	cmd.Stdin = strings.NewReader(strings.Join(blobList, "\n") + "\n")
	blobs, err := cmd.Output()
	if err != nil {
		t.Fatalf("cat-file: %v", err)
	}
	return commits, blobs
}

// afterKill repairs what git processes killed with the daemon left behind
// (stopping the queue SIGKILLs them; see TestStopDuringLandingCheckout and
// TestStopDuringWorktreeRecreate), the way a user following git's messages
// would, so that the run can go on checking that no work is lost.
func (w *world) afterKill(step int) {
	t := w.t
	t.Helper()
	e := w.e
	gitDir := filepath.Join(e.repo, ".git")
	var locks []string
	filepath.WalkDir(gitDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	mainIndex := false
	for _, l := range locks {
		rel, _ := filepath.Rel(gitDir, l)
		w.repairs = append(w.repairs, fmt.Sprintf("step %d: stale %s", step, rel))
		mainIndex = mainIndex || rel == "index.lock"
		os.Remove(l)
	}
	admins, _ := filepath.Glob(filepath.Join(gitDir, "worktrees", "*"))
	prune := false
	for _, a := range admins {
		locked, _ := os.ReadFile(filepath.Join(a, "locked"))
		broken := !exists(filepath.Join(a, "commondir")) || !exists(filepath.Join(a, "gitdir")) || !exists(filepath.Join(a, "HEAD"))
		gd, _ := os.ReadFile(filepath.Join(a, "gitdir"))
		wt := filepath.Dir(strings.TrimSpace(string(gd)))
		switch {
		case strings.TrimSpace(string(locked)) == "initializing":
			// `git worktree add` killed half way: nothing of anyone's is in
			// it yet; finish its checkout (or drop it when it is unusable).
			w.repairs = append(w.repairs, fmt.Sprintf("step %d: half-made worktree %s", step, filepath.Base(a)))
			os.Remove(filepath.Join(a, "locked"))
			if !broken && wt != "." {
				if _, err := gitTry(wt, "reset", "-q", "--hard"); err != nil {
					broken = true // killed before its HEAD was set
				}
			}
			if broken || wt == "." {
				os.RemoveAll(a)
				if wt != "." {
					os.RemoveAll(wt)
				}
				prune = true
			}
		case broken:
			w.repairs = append(w.repairs, fmt.Sprintf("step %d: half-removed worktree %s", step, filepath.Base(a)))
			prune = true
		}
	}
	if prune {
		e.git(e.repo, "worktree", "prune")
	}
	if mainIndex {
		// A landing killed half way through the user's checkout: put the
		// checkout back at HEAD, keeping the user's own README edit.
		e.git(e.repo, "reset", "-q")
		out, err := gitTry(e.repo, "status", "--porcelain", "-z", "--untracked-files=all")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Split(out, "\x00") {
			if len(f) < 4 || f[3:] == "README" {
				continue
			}
			name := f[3:]
			if f[:2] == "??" {
				if !slices.ContainsFunc(w.uncommitted, func(c content) bool { return c.dir == e.repo && c.file == name }) {
					os.Remove(filepath.Join(e.repo, name))
				}
				continue
			}
			e.git(e.repo, "checkout", "--", name)
		}
		w.repairs = append(w.repairs, fmt.Sprintf("step %d: half-applied landing in the user's checkout", step))
	}
}
