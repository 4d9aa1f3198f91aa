package gitserve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

const task = "t-aaaaa"

// branch is task's work branch.
const branch = "neuraphage/" + task + "/work"

// TestCloneFetchPushTaskBranch: a worker clones the task's base, pushes its
// branch (new, then a fast-forward), and a fetch brings main's new commit.
func TestCloneFetchPushTaskBranch(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	r := c.remote(task, 1, token1)
	dir := c.clone(r, branch)
	if got, want := c.git(dir, "", "rev-parse", "HEAD"), c.git(c.repo, "", "rev-parse", "main"); got != want {
		t.Fatalf("cloned HEAD %s, main is %s", got, want)
	}
	first := c.commit(dir, "a.txt", "one\n")
	if err := gitserve.Push(context.Background(), dir, r, branch); err != nil {
		t.Fatalf("push of a new task branch: %v", err)
	}
	if got := c.git(c.repo, "", "rev-parse", "refs/heads/"+branch); got != first {
		t.Fatalf("coordinator's %s is %s, want %s", branch, got, first)
	}
	second := c.commit(dir, "a.txt", "two\n")
	if err := gitserve.Push(context.Background(), dir, r, branch); err != nil {
		t.Fatalf("fast-forward push: %v", err)
	}
	if got := c.git(c.repo, "", "rev-parse", "refs/heads/"+branch); got != second {
		t.Fatalf("coordinator's %s is %s after a fast-forward, want %s", branch, got, second)
	}

	moved := c.commit(c.repo, "main.txt", "main moved\n")
	if err := gitserve.Fetch(context.Background(), dir, r); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if got := c.git(dir, "", "rev-parse", "refs/remotes/origin/main"); got != moved {
		t.Fatalf("fetched main is %s, want %s", got, moved)
	}
	// The worker sees main and its task's branches, nothing else.
	heads := c.git(dir, "", "for-each-ref", "--format=%(refname)", "refs/remotes/origin/")
	if want := "refs/remotes/origin/main\nrefs/remotes/origin/" + branch; heads != want {
		t.Fatalf("worker sees\n%s\nwant\n%s", heads, want)
	}
}

// TestWorkerSeesOnlyItsTasks: another task's branch and the user's other
// branches are neither listed nor fetchable by object id.
func TestWorkerSeesOnlyItsTasks(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.git(c.repo, "", "checkout", "--quiet", "private")
	secret := c.commit(c.repo, "secret.txt", "private work\n")
	c.git(c.repo, "", "checkout", "--quiet", "main")
	c.git(c.repo, "", "branch", "neuraphage/t-bbbbb/work", "private")
	c.assign(task, "w1", 1)
	c.assign("t-bbbbb", "w2", 1)
	r := c.remote(task, 1, token1)
	dir := c.clone(r, branch)

	err := gitserve.Fetch(context.Background(), dir, r, secret+":refs/heads/stolen")
	if err == nil {
		t.Fatalf("fetching a hidden commit by id succeeded")
	}
	if _, err := git.Run(context.Background(), dir, "cat-file", "-e", secret); err == nil {
		t.Fatalf("the hidden commit %s reached the worker", secret)
	}
	// Another worker's task, with this worker's token.
	other := c.remote("t-bbbbb", 1, token1)
	err = gitserve.Fetch(context.Background(), dir, other)
	if err == nil || !strings.Contains(err.Error(), "is not assigned to worker w1") {
		t.Fatalf("fetching another worker's task: %v, want a refusal naming the assignment", err)
	}
}
