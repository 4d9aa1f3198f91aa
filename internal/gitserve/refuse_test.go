package gitserve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

// TestRefusedPushes: each push a worker may not make is refused with a
// reason git shows, and leaves the coordinator's refs and objects as they
// were (nothing of a push refused before git runs is written at all).
func TestRefusedPushes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup prepares the worker's clone dir (on branch, with one
		// commit pushed) and returns the remote and push args to use.
		setup func(c *cluster, dir string) (gitserve.Remote, []string)
		want  string // in git's output
		// written: git itself refuses after receiving the pack, which
		// may leave unreachable objects (refs never move).
		written bool
	}{
		{
			name: "wrong token",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				return c.remote(task, 1, "not-the-token-0123456789"), []string{branch}
			},
			want: "no valid worker token",
		},
		{
			name: "revoked token",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				c.srv.Revoke("w1")
				return c.remote(task, 1, token1), []string{branch}
			},
			want: "no valid worker token",
		},
		{
			name: "another worker's task",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.assign("t-bbbbb", "w2", 1)
				c.git(dir, "", "checkout", "--quiet", "-b", "neuraphage/t-bbbbb/work")
				c.commit(dir, "b.txt", "x\n")
				return c.remote("t-bbbbb", 1, token1), []string{"neuraphage/t-bbbbb/work"}
			},
			want: "task t-bbbbb (epoch 1) is not assigned to worker w1",
		},
		{
			name: "another task's branch through this task's URL",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.git(dir, "", "checkout", "--quiet", "-b", "neuraphage/t-bbbbb/work")
				c.commit(dir, "b.txt", "x\n")
				return c.remote(task, 1, token1), []string{"neuraphage/t-bbbbb/work"}
			},
			want: "may push only the task's branches",
		},
		{
			name: "stale epoch after re-assignment",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				c.assign(task, "w2", 2)
				return c.remote(task, 1, token1), []string{branch}
			},
			want: "epoch 1 of task t-aaaaa is no longer current",
		},
		{
			name: "same worker, stale epoch",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				c.assign(task, "w1", 2)
				return c.remote(task, 1, token1), []string{branch}
			},
			want: "epoch 1 of task t-aaaaa is no longer current",
		},
		{
			name: "to main",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				return c.remote(task, 1, token1), []string{"HEAD:refs/heads/main"}
			},
			want: "may push only the task's branches",
		},
		{
			name: "force to main",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.git(dir, "", "commit", "--quiet", "--amend", "-m", "rewritten")
				return c.remote(task, 1, token1), []string{"--force", "HEAD:refs/heads/main"}
			},
			want: "may push only the task's branches",
		},
		{
			name: "a tag",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.git(dir, "", "tag", "v1")
				return c.remote(task, 1, token1), []string{"refs/tags/v1"}
			},
			want: "may push only the task's branches",
		},
		{
			name: "a task branch and main at once",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.commit(dir, "b.txt", "x\n")
				return c.remote(task, 1, token1), []string{branch, "HEAD:refs/heads/main"}
			},
			want: "refused with the rest of this push",
		},
		{
			name: "ref delete",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				return c.remote(task, 1, token1), []string{":refs/heads/" + branch}
			},
			want: "deleting a ref is not allowed",
		},
		{
			name: "force push over the task branch",
			setup: func(c *cluster, dir string) (gitserve.Remote, []string) {
				c.git(dir, "", "reset", "--quiet", "--hard", "HEAD~1")
				c.commit(dir, "c.txt", "rewritten history\n")
				return c.remote(task, 1, token1), []string{"--force", branch}
			},
			want:    "non-fast-forward",
			written: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, false)
			c.assign(task, "w1", 1)
			good := c.remote(task, 1, token1)
			dir := c.clone(good, branch)
			c.commit(dir, "a.txt", "pushed\n")
			if err := gitserve.Push(context.Background(), dir, good, branch); err != nil {
				t.Fatalf("first push: %v", err)
			}
			refsBefore, objectsBefore := c.refs(), c.objects()
			mainBefore := c.git(c.repo, "", "rev-parse", "main")

			r, args := tc.setup(c, dir)
			refsBefore = c.refs() // setup may assign, never write refs; re-read
			out := pushOutput(t, dir, r, args)
			t.Logf("git said:\n%s", out)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("push refused with\n%s\nwant it to say %q", out, tc.want)
			}
			if got := c.refs(); got != refsBefore {
				t.Errorf("refs changed by a refused push:\nbefore\n%s\nafter\n%s", refsBefore, got)
			}
			if got := c.git(c.repo, "", "rev-parse", "main"); got != mainBefore {
				t.Errorf("main moved from %s to %s", mainBefore, got)
			}
			if got := c.objects(); !tc.written && got != objectsBefore {
				t.Errorf("objects written by a push refused before git ran:\nbefore\n%s\nafter\n%s", objectsBefore, got)
			}
			c.git(c.repo, "", "fsck", "--no-progress", "--no-dangling")
			if strings.Contains(c.logs.String(), token1) || strings.Contains(c.logs.String(), token2) {
				t.Errorf("a token was logged:\n%s", c.logs.String())
			}
		})
	}
}

// pushOutput runs git push args to r with r's token and returns what git
// printed, failing the test when the push succeeds.
func pushOutput(t *testing.T, dir string, r gitserve.Remote, args []string) string {
	t.Helper()
	env := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Bearer " + r.Token}
	out, err := git.RunEnv(context.Background(), dir, env, append([]string{"push", "--porcelain", r.URL}, args...)...)
	if err == nil {
		t.Fatalf("push %v succeeded:\n%s", args, out)
	}
	return out + "\n" + git.Stderr(err)
}
