package merge_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestPR(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	argsFile := filepath.Join(bin, "args")
	gh := filepath.Join(bin, "gh")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + argsFile + "'; done\necho 'Creating pull request...'\necho https://example.invalid/pr/1\n"
	if err := os.WriteFile(gh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, PR: true, MaxSendBacks: 2, Cleanup: true},
		withLookPath(func(name string) (string, error) {
			if name != "gh" {
				return "", exec.ErrNotFound
			}
			return gh, nil
		}))
	remote := filepath.Join(t.TempDir(), "remote.git")
	e.git(e.repo, "init", "-q", "--bare", remote)
	e.git(e.repo, "remote", "add", "origin", remote)
	e.git(e.repo, "push", "-q", "origin", "main")
	mainBefore := e.rev(e.repo, "main")
	e.start()
	tk, w := e.newTask("a change for review")
	e.write(w.Path, "pr.txt", "pr\n")
	e.complete(tk.ID, "change for review")
	ent := e.waitState(tk.ID, store.MergePR)
	got := e.waitTask(tk.ID, task.Completed)
	if ent.PRURL != "https://example.invalid/pr/1" {
		t.Errorf("PR URL %q", ent.PRURL)
	}
	if !strings.Contains(got.CloseReason, "https://example.invalid/pr/1") {
		t.Errorf("close reason %q", got.CloseReason)
	}
	branch := worktree.Branch(tk.ID)
	pushed := e.git(remote, "rev-parse", "--verify", "refs/heads/"+branch)
	if tip := e.rev(e.repo, "refs/heads/"+branch); pushed != tip {
		t.Errorf("remote has %s at %s, local tip %s", branch, pushed, tip)
	}
	if e.git(remote, "show", branch+":pr.txt") != "pr" {
		t.Error("pushed branch lacks the work")
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Join(strings.Split(strings.TrimSpace(string(args)), "\n"), " ")
	if !strings.HasPrefix(a, "pr create --base main --head "+branch+" ") {
		t.Errorf("gh args %q", a)
	}
	// Nothing landed locally, and the worktree stays (a PR is not landed).
	if e.rev(e.repo, "main") != mainBefore || e.git(remote, "rev-parse", "main") != mainBefore {
		t.Error("main moved in PR mode")
	}
	if !exists(w.Path) {
		t.Error("the worktree of an open PR was removed")
	}
}

func TestPRWithoutGh(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, PR: true, MaxSendBacks: 2},
		withLookPath(func(string) (string, error) { return "", errors.New("gh: executable file not found in $PATH") }))
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "x.txt", "x\n")
	e.complete(tk.ID, "x")
	ent := e.waitState(tk.ID, store.MergeParked)
	got := e.waitTask(tk.ID, task.Paused)
	if !strings.Contains(ent.Detail, "gh is not installed") || !strings.Contains(got.CloseReason, "gh is not installed") {
		t.Errorf("detail %q reason %q should say gh is missing", ent.Detail, got.CloseReason)
	}
	if e.git(e.repo, "show", worktree.Branch(tk.ID)+":x.txt") != "x" {
		t.Error("the work is not kept on the branch")
	}
}
