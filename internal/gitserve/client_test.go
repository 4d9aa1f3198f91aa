package gitserve_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

// realGit finds git on PATH without os/exec.
func realGit(t *testing.T) string {
	t.Helper()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, "git")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Fatal("git not found on PATH")
	return ""
}

// TestTokenNeverOnACommandLineOrOnDisk: every git process of a clone, a
// fetch and a push (the worker's and the coordinator's) is started
// through a wrapper that records its arguments, as ps shows them; none
// holds the token, and neither does any file of the worker's clone nor
// the server's log.
func TestTokenNeverOnACommandLineOrOnDisk(t *testing.T) {
	// Not parallel: PATH is the process's.
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv.log")
	wrapper := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$0 $*\" >> %q\nexec %q \"$@\"\n", argv, realGit(t))
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	r := c.remote(task, 1, token1)
	dir := c.clone(r, branch)
	c.commit(dir, "a.txt", "one\n")
	if err := gitserve.Push(context.Background(), dir, r, branch); err != nil {
		t.Fatal(err)
	}
	if err := gitserve.Fetch(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clone", "push", "fetch", "upload-pack", "receive-pack"} {
		if !strings.Contains(string(log), " "+want+" ") {
			t.Fatalf("no git %s recorded; the wrapper was bypassed:\n%s", want, log)
		}
	}
	if strings.Contains(string(log), token1) {
		t.Fatalf("the token is on a git command line:\n%s", log)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), token1) {
			return fmt.Errorf("%s holds the token", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.logs.String(), token1) {
		t.Fatalf("the server logged the token:\n%s", c.logs.String())
	}
}

// TestHTTPSWithACAFile: over TLS the clone needs the server's CA; given its
// PEM file it clones and pushes.
func TestHTTPSWithACAFile(t *testing.T) {
	t.Parallel()
	c := newCluster(t, true)
	c.assign(task, "w1", 1)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	block := &pem.Block{Type: "CERTIFICATE", Bytes: c.http.Certificate().Raw}
	if err := os.WriteFile(ca, pem.EncodeToMemory(block), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.remote(task, 1, token1)
	if !strings.HasPrefix(r.URL, "https://") {
		t.Fatalf("URL %s is not https", r.URL)
	}
	err := gitserve.Clone(context.Background(), r, filepath.Join(t.TempDir(), "untrusted"), "main")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("clone without the CA: %v, want a certificate error", err)
	}
	r.CAFile = ca
	dir := c.clone(r, branch)
	want := c.commit(dir, "a.txt", "over tls\n")
	if err := gitserve.Push(context.Background(), dir, r, branch); err != nil {
		t.Fatal(err)
	}
	if got := c.git(c.repo, "", "rev-parse", "refs/heads/"+branch); got != want {
		t.Fatalf("pushed %s, coordinator has %s", want, got)
	}
}

// TestConcurrentPushesAndFetches: two workers push their own tasks while
// fetching, at the same time, from the same repository; every push lands
// and every fetch sees a consistent branch.
func TestConcurrentPushesAndFetches(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	tasks := map[string]string{"t-ccccc": "w1", "t-ddddd": "w2"}
	tokens := map[string]string{"w1": token1, "w2": token2}
	dirs := map[string]string{}
	for tk, w := range tasks {
		c.assign(tk, w, 1)
		dirs[tk] = c.clone(c.remote(tk, 1, tokens[w]), "neuraphage/"+tk+"/work")
	}
	const rounds = 5
	var g errgroup.Group
	for tk, w := range tasks {
		r := c.remote(tk, 1, tokens[w])
		dir := dirs[tk]
		br := "neuraphage/" + tk + "/work"
		fetchDir := c.clone(r, "scratch")
		g.Go(func() error {
			for i := range rounds {
				c.commit(dir, "f.txt", fmt.Sprintf("%s %d\n", tk, i))
				if err := gitserve.Push(context.Background(), dir, r, br); err != nil {
					return fmt.Errorf("push %d of %s: %w", i, tk, err)
				}
			}
			return nil
		})
		g.Go(func() error {
			for i := range rounds {
				if err := gitserve.Fetch(context.Background(), fetchDir, r); err != nil {
					return fmt.Errorf("fetch %d of %s: %w", i, tk, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for tk := range tasks {
		br := "refs/heads/neuraphage/" + tk + "/work"
		if got, want := c.git(c.repo, "", "rev-parse", br), c.git(dirs[tk], "", "rev-parse", "HEAD"); got != want {
			t.Errorf("%s on the coordinator is %s, the worker's tip is %s", br, got, want)
		}
	}
	c.git(c.repo, "", "fsck", "--no-progress", "--no-dangling")
}

// TestResumeOnAnotherWorker: after a re-assignment the new worker clones
// the task's own branch as the old worker pushed it and carries on, while
// the old worker is shut out.
func TestResumeOnAnotherWorker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	old := c.remote(task, 1, token1)
	dir := c.clone(old, branch)
	checkpoint := c.commit(dir, "a.txt", "checkpoint\n")
	if err := gitserve.Push(context.Background(), dir, old, branch); err != nil {
		t.Fatal(err)
	}
	c.assign(task, "w2", 2)
	r := c.remote(task, 2, token2)
	dir2 := filepath.Join(t.TempDir(), "resume")
	if err := gitserve.Clone(context.Background(), r, dir2, branch); err != nil {
		t.Fatal(err)
	}
	if got := c.git(dir2, "", "rev-parse", "HEAD"); got != checkpoint {
		t.Fatalf("resumed at %s, want the checkpoint %s", got, checkpoint)
	}
	next := c.commit(dir2, "a.txt", "carried on\n")
	if err := gitserve.Push(context.Background(), dir2, r, branch); err != nil {
		t.Fatal(err)
	}
	c.commit(dir, "a.txt", "the lost worker's late work\n")
	if err := gitserve.Push(context.Background(), dir, old, branch); err == nil || !strings.Contains(err.Error(), "no longer current") {
		t.Fatalf("the old worker's push: %v, want it refused as stale", err)
	}
	if err := gitserve.Fetch(context.Background(), dir, old); err == nil {
		t.Fatalf("the old worker fetched a task it lost")
	}
	if got := c.git(c.repo, "", "rev-parse", "refs/heads/"+branch); got != next {
		t.Fatalf("task branch is %s, want the new worker's %s", got, next)
	}
}

// TestBadRemotes: a remote that is not http(s), carries credentials in
// its URL or has no token is refused before git runs.
func TestBadRemotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, r := range []gitserve.Remote{
		{URL: "file:///tmp/repo", Token: token1},
		{URL: "https://user:pw@example.com/git/task/t-aaaaa/1", Token: token1},
		{URL: "https://example.com/git/task/t-aaaaa/1"},
		{URL: "https://example.com/git/task/t-aaaaa/1", Token: "a\nb"},
		{URL: "https://example.com/git/task/t-aaaaa/1", Token: token1, CAFile: filepath.Join(dir, "missing.pem")},
	} {
		err := gitserve.Clone(context.Background(), r, filepath.Join(dir, "x"), "main")
		if err == nil {
			t.Errorf("clone of %+v succeeded", r)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("clone of %+v reached the network: %v", r, err)
		}
	}
}
