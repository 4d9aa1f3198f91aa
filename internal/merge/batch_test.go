package merge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// landUpdates returns the updates of main the queue made: its reflog
// entries other than the test's commits.
func (e *env) landUpdates() []string {
	e.t.Helper()
	var out []string
	for _, l := range strings.Split(e.git(e.repo, "reflog", "show", "--format=%gs", "refs/heads/main"), "\n") {
		if l != "" && !strings.HasPrefix(l, "commit") {
			out = append(out, l)
		}
	}
	return out
}

// TestBatchLandsInOneUpdate: entries ready together land in one update of
// main, each as the strategy makes it, in queue order, with the authors and
// messages of the tasks' commits; the tasks' branches and worktrees are
// left as they were.
func TestBatchLandsInOneUpdate(t *testing.T) {
	for _, strategy := range []string{merge.Rebase, merge.Merge, merge.Squash} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e := newMergeEnv(t, merge.Config{Strategy: strategy, MaxSendBacks: 2})
			e.commitOn(e.repo, "main moved", map[string]string{"main.txt": "main\n"})
			const n = 4
			var ids []task.ID
			var tips []string
			for i := range n {
				tk, w := e.newTask(fmt.Sprintf("task %d", i))
				e.commitOn(w.Path, fmt.Sprintf("first of %d", i), map[string]string{fmt.Sprintf("a%d.txt", i): "a\n"})
				e.write(w.Path, fmt.Sprintf("b%d.txt", i), "b\n") // committed by Complete
				e.complete(tk.ID, fmt.Sprintf("work %d", i))
				ids = append(ids, tk.ID)
				tips = append(tips, e.rev(w.Path, "HEAD"))
			}
			e.start()
			var commits []string
			for _, id := range ids {
				m := e.waitState(id, store.MergeLanded)
				e.waitTask(id, task.Completed)
				commits = append(commits, m.Commit)
				if m.Step != "" {
					t.Errorf("landed entry still records step %q", m.Step)
				}
			}
			if u := e.landUpdates(); len(u) != 1 {
				t.Fatalf("updates of main = %q, want one for the %d branches", u, n)
			}
			main := e.rev(e.repo, "main")
			if commits[n-1] != main {
				t.Errorf("the last entry landed as %s, main is at %s", commits[n-1], main)
			}
			for i := 1; i < n; i++ {
				if out, err := gitTry(e.repo, "merge-base", "--is-ancestor", commits[i-1], commits[i]); err != nil {
					t.Errorf("entry %d's commit is not before entry %d's: %s", i-1, i, out)
				}
			}
			for i := range n {
				for _, f := range []string{fmt.Sprintf("a%d.txt", i), fmt.Sprintf("b%d.txt", i)} {
					if e.read(e.repo, f) != "a\n" && e.read(e.repo, f) != "b\n" {
						t.Errorf("%s missing from the checkout", f)
					}
				}
			}
			if e.read(e.repo, "main.txt") != "main\n" || e.status(e.repo) != "" {
				t.Errorf("checkout of main after the batch: %q", e.status(e.repo))
			}
			log := e.git(e.repo, "log", "--format=%an|%s", "main")
			switch strategy {
			case merge.Rebase:
				if got := e.git(e.repo, "rev-list", "--count", "main"); got != fmt.Sprint(2+2*n) {
					t.Errorf("main has %s commits, want %d (each task's two rebased)", got, 2+2*n)
				}
				if !strings.Contains(log, "|first of 2") {
					t.Errorf("a rebased commit lost its message:\n%s", log)
				}
			case merge.Merge:
				if got := e.git(e.repo, "rev-list", "--count", "--merges", "main"); got != fmt.Sprint(n) {
					t.Errorf("main has %s merge commits, want %d", got, n)
				}
			case merge.Squash:
				if got := e.git(e.repo, "rev-list", "--count", "main"); got != fmt.Sprint(2+n) {
					t.Errorf("main has %s commits, want %d (one per task)", got, 2+n)
				}
			}
			for i, id := range ids {
				w, err := e.st.GetWorktree(e.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got := e.rev(w.Path, "HEAD"); got != tips[i] {
					t.Errorf("task %d's branch moved from %s to %s", i, tips[i], got)
				}
				if w.Landed != commits[i] || w.LandedTip != tips[i] {
					t.Errorf("task %d's worktree records landed %s from %s, want %s from %s", i, w.Landed, w.LandedTip, commits[i], tips[i])
				}
			}
		})
	}
}

// TestBatchConflicts: in one batch, an entry that conflicts with main is
// sent back against main; of two entries that conflict with each other
// the first lands and the second is tried again on the new main, where it
// is sent back naming the commit that has the first; the others land.
func TestBatchConflicts(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tasks := []struct {
		desc  string
		files map[string]string
	}{
		{"clean one", map[string]string{"one.txt": "1\n"}},
		{"conflicts with main", map[string]string{"shared.txt": "line 1 task\nline 2\nline 3\n"}},
		{"first of a pair", map[string]string{"pair.txt": "first\n"}},
		{"second of the pair", map[string]string{"pair.txt": "second\n"}},
		{"clean two", map[string]string{"two.txt": "2\n"}},
	}
	var ids []task.ID
	for _, tc := range tasks {
		tk, w := e.newTask(tc.desc)
		for p, c := range tc.files {
			e.write(w.Path, p, c)
		}
		e.complete(tk.ID, tc.desc)
		ids = append(ids, tk.ID)
	}
	e.commitOn(e.repo, "main edits line 1", map[string]string{"shared.txt": "line 1 main\nline 2\nline 3\n"})
	base := e.rev(e.repo, "main")
	e.start()
	for _, i := range []int{0, 2, 4} {
		e.waitState(ids[i], store.MergeLanded)
	}
	first := e.entries(ids[2])[0].Commit
	against := e.waitState(ids[1], store.MergeSentBack)
	pair := e.waitState(ids[3], store.MergeSentBack)
	if !slices.Equal(against.Files, []string{"shared.txt"}) || !strings.Contains(against.Detail, base[:7]) {
		t.Errorf("conflict with main: files %v, detail %q; want shared.txt against %s", against.Files, against.Detail, base[:7])
	}
	if !slices.Equal(pair.Files, []string{"pair.txt"}) {
		t.Errorf("conflict within the pair: files %v", pair.Files)
	}
	if anc, err := gitTry(e.repo, "merge-base", "--is-ancestor", first, "main"); err != nil {
		t.Fatalf("the first of the pair is not on main: %s", anc)
	}
	if inj := e.inj.await(t, ids[3]); len(inj) != 1 || inj[0].Kind != "rebase" {
		t.Fatalf("injections to the second of the pair: %+v", inj)
	}
	// It was sent back against a commit of main that has the first.
	_, at, _ := strings.Cut(pair.Detail, "(at ")
	at, _, _ = strings.Cut(at, ")")
	if at == "" {
		t.Fatalf("no commit in the detail %q", pair.Detail)
	}
	if out, err := gitTry(e.repo, "merge-base", "--is-ancestor", first, at); err != nil {
		t.Errorf("the second of the pair was sent back against %s, which lacks the first (%s): %s", at, first, out)
	}
	if got := e.read(e.repo, "pair.txt"); got != "first\n" {
		t.Errorf("pair.txt on main = %q", got)
	}
	for _, id := range []task.ID{ids[1], ids[3]} {
		e.waitTask(id, task.Queued)
	}
}

// TestBatchGateBisects: the gate runs on the batch's result; when it fails
// the batch is bisected, the bad entry is sent back with the gate's output
// and the good ones land. main never holds the bad entry's file.
func TestBatchGateBisects(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2,
		Gate: `if [ -e bad.txt ]; then echo "bad.txt found in $PWD"; exit 4; fi; test -f README`})
	const n, bad = 5, 3
	var ids []task.ID
	for i := range n {
		tk, w := e.newTask(fmt.Sprintf("task %d", i))
		name := fmt.Sprintf("f%d.txt", i)
		if i == bad {
			name = "bad.txt"
		}
		e.write(w.Path, name, "x\n")
		e.complete(tk.ID, fmt.Sprintf("work %d", i))
		ids = append(ids, tk.ID)
	}
	e.start()
	for i, id := range ids {
		if i == bad {
			m := e.waitState(id, store.MergeSentBack)
			if !strings.Contains(m.Detail, "exit 4") {
				t.Errorf("bad entry's detail %q", m.Detail)
			}
			inj := e.inj.await(t, id)
			if len(inj) != 1 || inj[0].Kind != "message" || !strings.Contains(inj[0].Text, "bad.txt found") {
				t.Errorf("bad entry's injections %+v", inj)
			}
			continue
		}
		e.waitState(id, store.MergeLanded)
	}
	if exists(filepath.Join(e.repo, "bad.txt")) {
		t.Error("bad.txt is in the checkout of main")
	}
	if out := e.git(e.repo, "log", "--format=%H", "main", "--", "bad.txt"); out != "" {
		t.Errorf("a commit with bad.txt landed: %s", out)
	}
	for i := range n {
		if i != bad && !exists(filepath.Join(e.repo, fmt.Sprintf("f%d.txt", i))) {
			t.Errorf("f%d.txt did not land", i)
		}
	}
}

// TestBatchCancelDuringGate: cancelling one entry while its batch is gated
// stops the gate (Cancel does not wait for it); the batch is built and
// gated again without it, and the others land.
func TestBatchCancelDuringGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arm, hit := filepath.Join(dir, "armed"), filepath.Join(dir, "hit")
	if err := os.WriteFile(arm, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// While armed the gate holds (until killed); afterwards it passes.
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2,
		Gate: "if [ -e '" + arm + "' ]; then touch '" + hit + "'; sleep 600; fi"})
	ids, _ := e.batchTasks(3)
	before := e.rev(e.repo, "main")
	e.start()
	testkit.WaitFor(t, "the batch's gate to start", func() bool { return exists(hit) })
	os.Remove(arm)
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	ent, err := e.q.Cancel(ctx, ids[1], "the user changed their mind")
	if err != nil {
		t.Fatalf("Cancel during the batch's gate: %v", err)
	}
	if ent.State != store.MergeCancelled {
		t.Errorf("cancelled entry is %s", ent.State)
	}
	e.waitTask(ids[1], task.Paused)
	for _, i := range []int{0, 2} {
		e.waitState(ids[i], store.MergeLanded)
	}
	if got := e.entries(ids[1]); len(got) != 1 || got[0].State != store.MergeCancelled {
		t.Errorf("the cancelled task's entries: %+v", got)
	}
	if exists(filepath.Join(e.repo, "t1.txt")) {
		t.Error("the cancelled entry's file landed")
	}
	if out := e.git(e.repo, "rev-list", "--count", before+"..main"); out != "2" {
		t.Errorf("%s commits landed, want 2", out)
	}
}
