package merge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// slowCheckout makes git's checkout of *.slow files block while armed: a
// smudge filter that, when the arm file exists, creates the hit file and
// sleeps. It lets a test stop the queue while git is half way through
// writing a work tree, which a large checkout does for real.
type slowCheckout struct {
	arm, hit string
}

func (e *env) slowCheckout() slowCheckout {
	e.t.Helper()
	dir := e.t.TempDir()
	s := slowCheckout{arm: filepath.Join(dir, "armed"), hit: filepath.Join(dir, "hit")}
	script := filepath.Join(dir, "smudge")
	body := "#!/bin/sh\nif [ -e '" + s.arm + "' ]; then touch '" + s.hit + "'; sleep 20; fi\nexec cat\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.git(e.repo, "config", "filter.slow.smudge", script)
	e.commitOn(e.repo, "slow files", map[string]string{".gitattributes": "*.slow filter=slow\n"})
	return s
}

func (s slowCheckout) Arm(t testing.TB) {
	if err := os.WriteFile(s.arm, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s slowCheckout) Disarm() { os.Remove(s.arm) }

func (s slowCheckout) waitHit(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !exists(s.hit) {
		if time.Now().After(deadline) {
			t.Fatal("the checkout never reached the slow file")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStopDuringLandingCheckout: the daemon stops (the queue's context
// ends) while git fast-forwards the user's checkout of main. The user's
// checkout must be left as it was or fully updated, with no lock held.
func TestStopDuringLandingCheckout(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	slow := e.slowCheckout()
	before := e.rev(e.repo, "main")
	tk, w := e.newTask("task")
	e.write(w.Path, "a-first.txt", "first\n")
	e.write(w.Path, "m.slow", "slow\n")
	e.write(w.Path, "z-last.txt", "last\n")
	e.complete(tk.ID, "three files") // queued; the queue is not running yet
	slow.Arm(t)
	e.start()
	slow.waitHit(t)
	e.stop() // the daemon stops mid-checkout
	slow.Disarm()

	var problems []string
	if exists(filepath.Join(e.repo, ".git", "index.lock")) {
		problems = append(problems, "a stale .git/index.lock is left in the user's checkout")
	}
	main := e.rev(e.repo, "main")
	st := e.status(e.repo)
	switch {
	case main == before && st != "":
		problems = append(problems, "main did not move but the checkout holds a half-applied landing:\n"+st)
	case main != before && (st != "" || !exists(filepath.Join(e.repo, "z-last.txt"))):
		problems = append(problems, "main moved but the checkout is not at it:\n"+st)
	}
	if len(problems) > 0 {
		t.Errorf("stopping the queue SIGKILLs the landing's `git merge --ff-only` in the user's checkout: %s", strings.Join(problems, "; "))
	}
	// A new daemon lands it.
	e.newQueue()
	e.start()
	e.waitState(tk.ID, store.MergeLanded)
	if e.status(e.repo) != "" {
		t.Errorf("checkout not clean after landing: %s", e.status(e.repo))
	}
}

// TestStopDuringWorktreeRecreate: the queue recreates a task's worktree
// whose directory the user deleted, and the daemon stops half way through
// its checkout. The next daemon must not take the half-written worktree
// for the task's work: its missing files are not deletions to land.
func TestStopDuringWorktreeRecreate(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	slow := e.slowCheckout()
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "agent work", map[string]string{"a-first.txt": "first\n", "m.slow": "slow\n", "z-last.txt": "last\n"})
	e.complete(tk.ID, "three files")
	if err := os.RemoveAll(w.Path); err != nil { // the user deletes the worktree
		t.Fatal(err)
	}
	slow.Arm(t)
	e.start()
	slow.waitHit(t)
	e.stop() // the daemon stops while `git worktree add` checks out
	slow.Disarm()

	e.newQueue()
	if _, err := e.wt.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.start()
	ent := e.waitEntry(tk.ID, "closed or waiting", func(m store.MergeEntry) bool { return !m.State.Open() || m.State == store.MergeWaiting })
	if ent.State == store.MergeParked && strings.Contains(ent.Detail, "index.lock") {
		// The killed checkout left its lock: git says to remove it by hand
		// when no git runs, and the user does, then retries.
		t.Logf("parked: %s", ent.Detail)
		lock := filepath.Join(e.git(w.Path, "rev-parse", "--path-format=absolute", "--git-dir"), "index.lock")
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		if _, err := e.q.Retry(e.ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		prev := ent.ID
		ent = e.waitEntry(tk.ID, "closed or waiting after retry", func(m store.MergeEntry) bool {
			return m.ID != prev && (!m.State.Open() || m.State == store.MergeWaiting)
		})
	}
	e.stop()
	want := []string{"shared.txt", "README", ".gitattributes"}
	if ent.State == store.MergeLanded {
		want = append(want, "a-first.txt", "m.slow", "z-last.txt")
	}
	var lost []string
	for _, f := range want {
		if _, err := gitTry(e.repo, "cat-file", "-e", "main:"+f); err != nil {
			lost = append(lost, f)
		}
	}
	if len(lost) > 0 {
		t.Errorf("a worktree left half checked out by a stopped daemon (no index, files after the interruption missing) is taken as present; the queue commits the missing files as deletions (\"uncommitted work found at merge time\") and lands them: main lacks %v (entry %s: %s; last commit: %s)",
			lost, ent.State, ent.Detail, e.git(e.repo, "log", "-1", "--stat", "--format=%s", "main"))
	}
	if ent.State != store.MergeLanded {
		t.Errorf("entry %s: %s", ent.State, ent.Detail)
	}
}
