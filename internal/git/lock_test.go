package git_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// ltHold creates lock (a lock file another git process would hold) and
// removes it after release (never when release is 0).
func ltHold(t *testing.T, lock string, release time.Duration) {
	t.Helper()
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if release > 0 {
		timer := time.AfterFunc(release, func() { os.Remove(lock) })
		t.Cleanup(func() { timer.Stop() })
	}
	t.Cleanup(func() { os.Remove(lock) })
}

func ltCount(t *testing.T, dir, rev string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(mustGit(t, dir, "rev-list", "--count", rev)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunRetriesWhileIndexLocked(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "b.txt", "b\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	start := time.Now()
	ltHold(t, filepath.Join(dir, ".git", "index.lock"), 150*time.Millisecond)
	if _, err := git.Run(ctx, dir, "add", "-A"); err != nil {
		t.Fatalf("add -A with index.lock released after 150 ms: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("add -A succeeded after %v, before the lock was released", d)
	}
	if got := mustGit(t, dir, "ls-files"); got != "a.txt\nb.txt\n" {
		t.Errorf("ls-files = %q, want b.txt added", got)
	}
}

func TestRunRetriesWhileRefLocked(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	c2 := rtCommit(t, dir, "second", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	ltHold(t, filepath.Join(dir, ".git", "refs", "heads", "main.lock"), 150*time.Millisecond)
	if _, err := git.Run(ctx, dir, "update-ref", "refs/heads/main", c2+"~1"); err != nil {
		t.Fatalf("update-ref with the ref locked for 150 ms: %v", err)
	}
	if got := rtHead(t, dir); got == c2 {
		t.Error("main was not moved")
	}
}

func TestRunLockNeverReleased(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "b.txt", "b\n")
	ltHold(t, filepath.Join(dir, ".git", "index.lock"), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	_, err := git.Run(ctx, dir, "add", "-A")
	elapsed := time.Since(start)
	var gerr *git.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("got %v (%T), want a *git.Error", err, err)
	}
	if !strings.Contains(gerr.Stderr, "index.lock") {
		t.Errorf("Stderr = %q, want it to mention index.lock", gerr.Stderr)
	}
	if gerr.ExitCode <= 0 {
		t.Errorf("ExitCode = %d, want git's own failure", gerr.ExitCode)
	}
	if elapsed > 10*time.Second {
		t.Errorf("gave up after %v, want a few seconds", elapsed)
	}
	if elapsed < time.Second {
		t.Errorf("gave up after %v: no retries?", elapsed)
	}
	t.Logf("gave up after %v", elapsed)
}

func TestRunLockRetryStopsWithContext(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "b.txt", "b\n")
	ltHold(t, filepath.Join(dir, ".git", "index.lock"), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err := git.Run(ctx, dir, "add", "-A")
	if err == nil {
		t.Fatal("add -A succeeded with index.lock held")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v, want soon after the context's deadline (200 ms)", d)
	}
}

func TestRunEnv(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, nil)

	out, err := git.RunEnv(ctx, dir, []string{"GIT_AUTHOR_NAME=Env Person", "GIT_AUTHOR_EMAIL=env@example.com"}, "var", "GIT_AUTHOR_IDENT")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Env Person <env@example.com> ") {
		t.Errorf("GIT_AUTHOR_IDENT with RunEnv = %q, want Env Person", out)
	}
	if out := mustGit(t, dir, "var", "GIT_AUTHOR_IDENT"); strings.Contains(out, "Env Person") {
		t.Errorf("GIT_AUTHOR_IDENT with Run = %q: the environment of RunEnv leaked", out)
	}

	// A locking command, too.
	write(t, dir, "f.txt", "f\n")
	mustGit(t, dir, "add", "f.txt")
	if _, err := git.RunEnv(ctx, dir, []string{"GIT_COMMITTER_NAME=Committer Env"}, "commit", "-q", "-m", "env"); err != nil {
		t.Fatal(err)
	}
	if got := mustGit(t, dir, "log", "-1", "--format=%cn"); got != "Committer Env\n" {
		t.Errorf("committer = %q, want Committer Env", got)
	}

	// A nil or empty env is Run.
	for _, env := range [][]string{nil, {}} {
		if out, err := git.RunEnv(ctx, dir, env, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true\n" {
			t.Errorf("RunEnv(%v) = %q, %v", env, out, err)
		}
	}
}

func TestLockedNested(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	head := rtHead(t, dir)
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "wtb", wt)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	called := false
	err := git.Locked(ctx, dir, func(ctx context.Context) error {
		called = true
		// Locking commands with fn's ctx, in the repository and in a
		// linked worktree of it (same lock), do not wait for the lock.
		if _, err := git.Run(ctx, dir, "update-ref", "refs/heads/x", head); err != nil {
			return err
		}
		if _, err := git.Run(ctx, wt, "update-ref", "refs/heads/y", head); err != nil {
			return err
		}
		if _, err := git.Run(ctx, filepath.Join(wt, "."), "branch", "z"); err != nil {
			return err
		}
		// Locked again with fn's ctx runs at once.
		return git.Locked(ctx, wt, func(ctx context.Context) error {
			_, err := git.Run(ctx, dir, "tag", "t1")
			return err
		})
	})
	if err != nil {
		t.Fatalf("Locked: %v", err)
	}
	if !called {
		t.Fatal("fn was not called")
	}
	for _, b := range []string{"x", "y", "z"} {
		if ok, err := git.BranchExists(context.Background(), dir, b); err != nil || !ok {
			t.Errorf("branch %s: %v, %v", b, ok, err)
		}
	}
	if _, err := git.RevParse(context.Background(), dir, "t1"); err != nil {
		t.Errorf("tag t1: %v", err)
	}
}

func TestLockedReturnsFnError(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	errFn := errors.New("from fn")
	if err := git.Locked(context.Background(), dir, func(context.Context) error { return errFn }); !errors.Is(err, errFn) {
		t.Errorf("Locked = %v, want fn's error", err)
	}
	// The lock was released.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := git.Run(ctx, dir, "branch", "after"); err != nil {
		t.Errorf("after Locked: %v", err)
	}
	// Outside a repository, fn still runs (git fails on its own).
	called := false
	if err := git.Locked(ctx, t.TempDir(), func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Errorf("Locked outside a repository = %v, called %v", err, called)
	}
}

func TestLockedExcludes(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	head := rtHead(t, dir)
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "wtb", wt)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Sections in one work tree never overlap.
	var active, maxActive atomic.Int32
	var wg sync.WaitGroup
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		d := dir
		if i%2 == 1 {
			d = filepath.Join(dir, ".")
		}
		wg.Go(func() {
			errs <- git.Locked(ctx, d, func(ctx context.Context) error {
				cur := active.Add(1)
				defer active.Add(-1)
				for {
					m := maxActive.Load()
					if cur <= m || maxActive.CompareAndSwap(m, cur) {
						break
					}
				}
				if _, err := git.Run(ctx, d, "update-ref", fmt.Sprintf("refs/heads/b%d", i), head); err != nil {
					return err
				}
				time.Sleep(20 * time.Millisecond)
				return nil
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := maxActive.Load(); m != 1 {
		t.Errorf("%d Locked sections ran at once, want 1", m)
	}

	// A section in the linked worktree runs while one in the main work
	// tree is held (each waits for the other to have started).
	inWt := make(chan struct{})
	err := git.Locked(ctx, dir, func(ctx context.Context) error {
		done := make(chan error, 1)
		go func() {
			done <- git.Locked(context.Background(), wt, func(wctx context.Context) error {
				close(inWt)
				_, err := git.Run(wctx, wt, "commit", "-q", "--allow-empty", "-m", "in the linked worktree")
				return err
			})
		}()
		select {
		case <-inWt:
		case <-ctx.Done():
			return fmt.Errorf("the linked worktree's section did not start while the main one was held: %w", ctx.Err())
		}
		return <-done
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLockedBlocksLockingCommands(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	head := rtHead(t, dir)
	write(t, dir, "new.txt", "new\n")
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "wtb", wt)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	waits := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- f(short) }()
		err := <-done
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s during Locked: got %v, want it to wait until its deadline", what, err)
		}
		var gerr *git.Error
		if errors.As(err, &gerr) && gerr.ExitCode != -1 {
			t.Errorf("%s: ExitCode = %d, want -1", what, gerr.ExitCode)
		}
	}
	err := git.Locked(ctx, dir, func(context.Context) error {
		// Another goroutine's command on the same work tree's index
		// waits for the lock...
		waits("add in the work tree", func(ctx context.Context) error {
			_, err := git.Run(ctx, dir, "add", "new.txt")
			return err
		})
		// ... so does one that needs the repository alone...
		waits("config write", func(ctx context.Context) error {
			_, err := git.Run(ctx, dir, "config", "neuraphage.blocked", "true")
			return err
		})
		// ... and another Locked section in the work tree...
		called := false
		waits("Locked", func(ctx context.Context) error {
			return git.Locked(ctx, dir, func(context.Context) error { called = true; return nil })
		})
		if called {
			t.Error("a second Locked section ran")
		}
		// ... while read-only commands, updates of refs and another work
		// tree's index run.
		other, cancel3 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel3()
		if out, err := git.Run(other, dir, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(out) != head {
			t.Errorf("rev-parse during Locked: %q, %v", out, err)
		}
		if _, err := git.Run(other, dir, "status", "--porcelain"); err != nil {
			t.Errorf("status during Locked: %v", err)
		}
		if _, err := git.Run(other, dir, "symbolic-ref", "--quiet", "HEAD"); err != nil {
			t.Errorf("symbolic-ref during Locked: %v", err)
		}
		if _, err := git.Run(other, dir, "update-ref", "refs/heads/beside", head); err != nil {
			t.Errorf("update-ref of another ref during Locked: %v", err)
		}
		if _, err := git.Run(other, wt, "commit", "-q", "--allow-empty", "-m", "beside"); err != nil {
			t.Errorf("commit in another work tree during Locked: %v", err)
		}
		if _, err := git.Run(other, dir, "worktree", "add", "-q", "-b", "beside-wt", filepath.Join(t.TempDir(), "beside")); err != nil {
			t.Errorf("worktree add during Locked: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := git.Run(ctx, dir, "config", "--get", "neuraphage.blocked"); out != "" {
		t.Error("the blocked config write ran")
	}
	if got := mustGit(t, dir, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("the blocked add ran: %q staged", got)
	}
	// Released: now they run.
	if _, err := git.Run(ctx, dir, "add", "new.txt"); err != nil {
		t.Errorf("after Locked: %v", err)
	}
}

func TestLockedDifferentRepositories(t *testing.T) {
	t.Parallel()
	a, b := repo(t, nil), repo(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A section in b completes while one in a is held (with another
	// context, so it does not inherit a's lock).
	err := git.Locked(ctx, a, func(actx context.Context) error {
		done := make(chan error, 1)
		go func() {
			done <- git.Locked(ctx, b, func(bctx context.Context) error {
				_, err := git.Run(bctx, b, "branch", "in-b")
				return err
			})
		}()
		if _, err := git.Run(actx, a, "branch", "in-a"); err != nil {
			return err
		}
		return <-done
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{a, b} {
		if out := mustGit(t, d, "branch", "--list", "in-*"); strings.Count(out, "in-") != 1 {
			t.Errorf("branches in %s: %q", d, out)
		}
	}
}

func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	const n = 20
	// Each subtest makes its own context: they run after this function
	// has returned.
	timeout := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		t.Cleanup(cancel)
		return ctx
	}

	// Each goroutine adds its file and commits it alone (a pathspec: a
	// commit of the whole index could take another goroutine's staged file
	// and leave that one nothing to commit).
	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		ctx := timeout(t)
		dir := repo(t, nil)
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			name := fmt.Sprintf("dir%d/file %d.txt", i%3, i)
			write(t, dir, name, fmt.Sprintf("%d\n", i))
			wg.Go(func() {
				if _, err := git.Run(ctx, dir, "add", "--", name); err != nil {
					errs <- err
					return
				}
				if _, err := git.Run(ctx, dir, "commit", "-q", "-m", "add "+name, "--", name); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := ltCount(t, dir, "HEAD"); got != n+1 {
			t.Errorf("%d commits, want %d", got, n+1)
		}
		if got := strings.Count(mustGit(t, dir, "ls-files"), "\n"); got != n {
			t.Errorf("%d files tracked, want %d", got, n)
		}
		if s := rtStatus(t, dir); !s.Clean() {
			t.Errorf("status after the commits: %s", s.Describe())
		}
	})

	// The same with add and a commit of the whole index in one Locked
	// section.
	t.Run("Locked", func(t *testing.T) {
		t.Parallel()
		ctx := timeout(t)
		dir := repo(t, nil)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			name := fmt.Sprintf("f%d.txt", i)
			write(t, dir, name, fmt.Sprintf("%d\n", i))
			wg.Go(func() {
				errs <- git.Locked(ctx, dir, func(ctx context.Context) error {
					if _, err := git.Run(ctx, dir, "add", name); err != nil {
						return err
					}
					_, err := git.Run(ctx, dir, "commit", "-q", "-m", "add "+name)
					return err
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if got := ltCount(t, dir, "HEAD"); got != n+1 {
			t.Errorf("%d commits, want %d", got, n+1)
		}
		// Each commit holds exactly its own file.
		for i := range 3 {
			out := mustGit(t, dir, "show", "--name-only", "--format=", fmt.Sprintf("HEAD~%d", i))
			if strings.Count(out, "\n") != 1 {
				t.Errorf("HEAD~%d changes %q, want one file", i, out)
			}
		}
	})

	// Linked worktrees of one repository, each committing on its own
	// branch: one lock for all.
	t.Run("worktrees", func(t *testing.T) {
		t.Parallel()
		ctx := timeout(t)
		dir := repo(t, nil)
		parent := t.TempDir()
		const m = 6
		var wg sync.WaitGroup
		errs := make(chan error, 3*m)
		for i := range m {
			wt := filepath.Join(parent, fmt.Sprintf("wt%d", i))
			wg.Go(func() {
				if _, err := git.Run(ctx, dir, "worktree", "add", "-q", "-b", fmt.Sprintf("b%d", i), wt); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(wt, "f.txt"), []byte(wt), 0o644); err != nil {
					errs <- err
					return
				}
				if _, err := git.Run(ctx, wt, "add", "f.txt"); err != nil {
					errs <- err
					return
				}
				if _, err := git.Run(ctx, wt, "commit", "-q", "-m", "in "+wt); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		list, err := git.Worktrees(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != m+1 {
			t.Errorf("%d worktrees, want %d", len(list), m+1)
		}
		for i := range m {
			if got := ltCount(t, dir, fmt.Sprintf("b%d", i)); got != 2 {
				t.Errorf("b%d has %d commits, want 2", i, got)
			}
		}
	})
}

func TestRunWithoutDeadline(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	write(t, dir, "a.txt", "a\n")
	ctx := context.Background()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("Background has a deadline")
	}
	if _, err := git.Run(ctx, dir, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if out, err := git.Run(ctx, dir, "diff", "--cached", "--name-only"); err != nil || out != "a.txt\n" {
		t.Errorf("diff --cached = %q, %v", out, err)
	}
	if err := git.Locked(ctx, dir, func(ctx context.Context) error {
		_, err := git.Run(ctx, dir, "commit", "-q", "-m", "a")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if git.DefaultTimeout <= 0 {
		t.Errorf("DefaultTimeout = %v", git.DefaultTimeout)
	}
}

// Not parallel: it changes PATH for the whole process.
func TestRunNoGit(t *testing.T) {
	dir := repo(t, nil)
	plain := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, tc := range []struct {
		dir  string
		args []string
	}{
		{plain, []string{"version"}},
		{dir, []string{"status"}},
		{dir, []string{"add", "-A"}},   // locking, lock key known
		{plain, []string{"add", "-A"}}, // locking, lock key unknown
	} {
		_, err := git.Run(ctx, tc.dir, tc.args...)
		if !errors.Is(err, git.ErrNoGit) {
			t.Errorf("Run(%v) without git: got %v, want ErrNoGit", tc.args, err)
		}
		var gerr *git.Error
		if !errors.As(err, &gerr) || gerr.ExitCode != -1 {
			t.Errorf("Run(%v) without git: got %#v, want a *git.Error with ExitCode -1", tc.args, err)
		}
	}
	if _, err := git.RunEnv(ctx, dir, []string{"A=b"}, "version"); !errors.Is(err, git.ErrNoGit) {
		t.Errorf("RunEnv without git: got %v, want ErrNoGit", err)
	}
	if _, err := git.Inspect(ctx, dir); !errors.Is(err, git.ErrNoGit) || errors.Is(err, git.ErrNotRepo) {
		t.Errorf("Inspect without git: got %v, want ErrNoGit", err)
	}
	if err := git.Locked(ctx, plain, func(context.Context) error { return nil }); err != nil {
		t.Errorf("Locked without git: %v", err)
	}
}

// TestConcurrentWorktreeAdds: git's own `worktree add` is not safe to run
// concurrently (it reads every other worktree's administrative directory
// and dies on one half written, leaving its new branch behind: 12 of 60
// failed so on git 2.39). Through the runner every add succeeds, each
// worktree is checked out on its branch, and no branch is left without
// its worktree.
func TestConcurrentWorktreeAdds(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = fmt.Sprintf("%d\n", i)
	}
	dir := repo(t, files)
	head := rtHead(t, dir)
	parent := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := git.Run(ctx, dir, "worktree", "add", "-q", "-b", fmt.Sprintf("neuraphage/t%d/work", i), filepath.Join(parent, fmt.Sprint(i)), head)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	list, err := git.Worktrees(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n+1 {
		t.Errorf("%d worktrees, want %d", len(list), n+1)
	}
	for i := range n {
		p := filepath.Join(parent, fmt.Sprint(i))
		if got := strings.TrimSpace(mustGit(t, p, "symbolic-ref", "HEAD")); got != fmt.Sprintf("refs/heads/neuraphage/t%d/work", i) {
			t.Errorf("worktree %d is on %q", i, got)
		}
		if s := rtStatus(t, p); !s.Clean() {
			t.Errorf("worktree %d: %s", i, s.Describe())
		}
	}
	if got := strings.Count(mustGit(t, dir, "for-each-ref", "refs/heads/neuraphage/"), "\n"); got != n {
		t.Errorf("%d task branches, want %d", got, n)
	}
}

// TestRepositoryCommandRefusedInsideLocked: a command that needs the
// repository alone would wait forever for the section that runs it.
func TestRepositoryCommandRefusedInsideLocked(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := git.Locked(ctx, dir, func(ctx context.Context) error {
		_, err := git.Run(ctx, dir, "pack-refs", "--all")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "cannot run inside a Locked sequence") {
		t.Fatalf("pack-refs inside Locked: %v; want it refused", err)
	}
}

// TestWorktreeRemoveAndListBesideAdds: removals and listings run while
// worktrees are added (not held behind the adds); those that meet a
// worktree half made by an add are run again, and none fails.
func TestWorktreeRemoveAndListBesideAdds(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	head := rtHead(t, dir)
	parent := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 12
	for i := range n {
		mustGit(t, dir, "worktree", "add", "-q", "-b", fmt.Sprintf("old%d", i), filepath.Join(parent, fmt.Sprint("old", i)), head)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			_, err := git.Run(ctx, dir, "worktree", "add", "-q", "--no-checkout", "-b", fmt.Sprintf("new%d", i), filepath.Join(parent, fmt.Sprint("new", i)), head)
			errs <- err
		})
		wg.Go(func() {
			_, err := git.Run(ctx, dir, "worktree", "remove", filepath.Join(parent, fmt.Sprint("old", i)))
			errs <- err
		})
		wg.Go(func() {
			_, err := git.Worktrees(ctx, dir)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	list, err := git.Worktrees(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n+1 {
		t.Errorf("%d worktrees, want %d (the new ones and the main one)", len(list), n+1)
	}
	for _, wt := range list {
		if strings.HasPrefix(filepath.Base(wt.Path), "old") {
			t.Errorf("%s was not removed", wt.Path)
		}
	}
}
