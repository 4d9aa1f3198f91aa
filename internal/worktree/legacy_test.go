package worktree_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestLegacyFlatBranch: a task provisioned before branches had a directory
// each is recorded on neuraphage/<id>. Beside a task of today, on
// neuraphage/<id>/work, it keeps its branch through commit, a daemon
// restart, prune and restore: everything reads the branch from the record,
// nothing rebuilds it from the id.
func TestLegacyFlatBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := worktree.Config{}
	e := wtNewEnv(t, cfg)
	repo := wtRepo(t, "main", nil)
	old, cur := e.task(repo), e.task(repo)
	wOld, wCur := e.provision(old), e.provision(cur)
	if wCur.Branch != "neuraphage/"+string(cur.ID)+"/work" {
		t.Fatalf("new task's branch %q", wCur.Branch)
	}
	// The older daemon's name for the first task's branch.
	flat := "neuraphage/" + string(old.ID)
	wtGit(t, repo, "branch", "-m", wOld.Branch, flat)
	wOld.Branch = flat
	if _, err := e.st.PutWorktree(ctx, wOld); err != nil {
		t.Fatal(err)
	}
	oldTip := e.commitWork(old.ID, "old work", map[string]string{"old.txt": "o\n"})
	curTip := e.commitWork(cur.ID, "new work", map[string]string{"cur.txt": "c\n"})
	if wtRev(t, repo, "refs/heads/"+flat) != oldTip || wtRev(t, repo, "refs/heads/"+wCur.Branch) != curTip {
		t.Fatalf("commits not on the recorded branches: %s", wtGit(t, repo, "for-each-ref", "refs/heads/neuraphage/"))
	}
	if in := e.inspect(old.ID); !in.Exists || in.Tip != oldTip || in.Ahead != 1 {
		t.Errorf("Inspect(old) = %+v", in)
	}

	// The daemon restarts: both are known, neither is stray.
	rep, err := e.manager(cfg).Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || len(rep.Recreated) != 0 || len(rep.Problems) != 0 || len(rep.Strays) != 0 {
		t.Errorf("report %+v", rep)
	}

	e.setStatus(old.ID, task.Cancelled)
	res, err := e.m.Prune(ctx)
	if err != nil || len(res) != 1 || !res[0].Removed || res[0].TaskID != old.ID {
		t.Fatalf("Prune = %+v, %v", res, err)
	}
	if wtRev(t, repo, "refs/heads/"+flat) != "" || wtRev(t, repo, worktree.ArchiveRef(old.ID)) != oldTip {
		t.Errorf("after prune: branch %q, archive %q", wtRev(t, repo, "refs/heads/"+flat), wtRev(t, repo, worktree.ArchiveRef(old.ID)))
	}
	if wtRev(t, repo, "refs/heads/"+wCur.Branch) != curTip {
		t.Error("pruning the old task moved the new one's branch")
	}

	w, err := e.m.Restore(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Branch != flat || w.State != store.WorktreeActive || wtRev(t, repo, "refs/heads/"+flat) != oldTip {
		t.Errorf("restored %+v", w)
	}
	if b := wtGit(t, w.Path, "symbolic-ref", "--short", "HEAD"); b != flat {
		t.Errorf("restored worktree on %q, want %s", b, flat)
	}
	if _, err := os.Stat(w.Path); err != nil || !strings.HasSuffix(w.Path, string(old.ID)) {
		t.Errorf("restored path %s: %v", w.Path, err)
	}
}
