package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// Making worktrees side by side. Git itself lets one `git worktree add` run
// at a time in a repository (git.Locked's notes), so the add is cut where
// git's own add is: `worktree add --no-checkout --lock` makes the worktree
// without its files, locked "initializing" as git's add does while it
// checks out; the checkout (the index and the files), the unlock and the
// post-checkout hook then run beside other provisions, up to
// Config.Parallel at once. What does not change while the daemon runs
// (the repository's directories, its base branch, its hooks directory) is
// asked of git once per repository.

// target is what Target found for a repository: facts that do not change
// while the daemon runs, asked of git once per repository.
type target struct {
	repo git.Repo
	base string
}

// hooksDir returns the hooks directory of the repository whose main work
// tree is repo (core.hooksPath, or hooks in its git directory), asked of
// git once.
func (m *Manager) hooksDir(ctx context.Context, repo string) (string, error) {
	get := func() (string, bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		h, ok := m.hooks[repo]
		return h, ok
	}
	return askOnce(m, ctx, "hooks\x00"+repo, get, func(ctx context.Context) (string, error) {
		out, err := git.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
		if err != nil {
			return "", err
		}
		h := filepath.Clean(strings.TrimSpace(out))
		m.mu.Lock()
		m.hooks[repo] = h
		m.mu.Unlock()
		return h, nil
	})
}

// askOnce returns what get has, else what read asks of git and caches:
// the provisions of one repository running at once (released together)
// ask once, the others waiting for that answer (key names it). The
// question runs on its own time, not cut short by the caller that asked
// first giving up.
func askOnce[T any](m *Manager, ctx context.Context, key string, get func() (T, bool), read func(context.Context) (T, error)) (T, error) {
	if v, ok := get(); ok {
		return v, nil
	}
	v, err, _ := m.flight.Do(key, func() (any, error) {
		if v, ok := get(); ok {
			return v, nil // asked by a flight that ended since
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return read(ctx)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// Target resolves the repository and base branch a task in repo works
// against: the top of the main work tree and the configured (or default)
// base branch. It refuses what a worktree cannot be made for.
func (m *Manager) Target(ctx context.Context, repo string) (git.Repo, string, error) {
	tg, err := m.target(ctx, repo, false)
	return tg.repo, tg.base, err
}

// target is Target, kept per repository; fresh asks git again (the base
// branch it named is gone, say).
func (m *Manager) target(ctx context.Context, repo string, fresh bool) (target, error) {
	if repo == "" {
		return target{}, errors.New("the task has no repository; create it with --repo")
	}
	get := func() (target, bool) {
		m.mu.Lock()
		tg, ok := m.targets[repo]
		m.mu.Unlock()
		if !ok || fresh {
			return tg, false
		}
		// Submodules are checked each time: a stat (one found is refused
		// by asking again).
		_, err := os.Stat(filepath.Join(tg.repo.Main, ".gitmodules"))
		return tg, err != nil
	}
	key := "target\x00" + repo
	if fresh {
		key = "fresh target\x00" + repo
	}
	return askOnce(m, ctx, key, get, func(ctx context.Context) (target, error) { return m.readTarget(ctx, repo) })
}

// readTarget asks git what target caches.
func (m *Manager) readTarget(ctx context.Context, repo string) (target, error) {
	r, err := git.Inspect(ctx, repo)
	switch {
	case errors.Is(err, git.ErrNotRepo):
		return target{}, fmt.Errorf("%s is not inside a git repository; run `git init` there or pass --repo", repo)
	case err != nil:
		return target{}, err
	}
	if _, err := os.Stat(filepath.Join(r.Main, ".gitmodules")); err == nil {
		return target{}, fmt.Errorf("%s has submodules (.gitmodules); worktrees of repositories with submodules are not supported yet", r.Main)
	}
	base := m.cfg.Base
	if base == "" {
		if base, err = git.DefaultBranch(ctx, r); err != nil {
			return target{}, err
		}
	} else if ok, err := git.BranchExists(ctx, r.Main, base); err != nil {
		return target{}, err
	} else if !ok {
		return target{}, fmt.Errorf("%s has no branch %q (worktree.base in the config)", r.Main, base)
	}
	// Only the facts that do not change: the branch checked out in the
	// main work tree and its commit do.
	r.Head, r.Branch = "", ""
	tg := target{repo: r, base: base}
	m.mu.Lock()
	m.targets[repo] = tg
	m.mu.Unlock()
	return tg, nil
}

// addNew makes w's worktree on a new branch at from, as add does, without
// first asking whether the branch exists: a new task's branch does not,
// and when it does git refuses the new one and add keeps its work. It is
// made by fastAdd unless that leaves it to git's own add.
func (m *Manager) addNew(ctx context.Context, w store.Worktree, r git.Repo, from string) error {
	ctx, cancel := toTheEnd(ctx)
	defer cancel()
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return fmt.Errorf("creating the worktree root: %w", err)
	}
	err := m.fastAdd(ctx, w, r, from)
	var berr branchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &berr):
		if exists, xerr := git.BranchExists(ctx, w.Repo, w.Branch); xerr == nil && exists {
			return m.add(ctx, w, from)
		}
		return berr.err
	case !errors.Is(err, errSlow):
		return err
	}
	_, err = git.Run(ctx, w.Repo, "worktree", "add", "--no-checkout", "--lock", "--reason", initializing, "-b", w.Branch, w.Path, from)
	if err != nil {
		if exists, berr := git.BranchExists(ctx, w.Repo, w.Branch); berr == nil && exists {
			return m.add(ctx, w, from)
		}
		return err
	}
	return m.checkout(ctx, w)
}

// add runs `git worktree add` for w: on its branch when the branch exists
// (its work is kept), else on a new branch at from.
//
// Git lets one `worktree add` run at a time in a repository (it reads
// every other worktree's files, and dies on one half made), so the add
// makes the worktree without its files, locked "initializing" as git's own
// add does while it checks out; checkout writes them, beside other
// provisions, and unlocks it.
func (m *Manager) add(ctx context.Context, w store.Worktree, from string) error {
	ctx, cancel := toTheEnd(ctx)
	defer cancel()
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return fmt.Errorf("creating the worktree root: %w", err)
	}
	exists, err := git.BranchExists(ctx, w.Repo, w.Branch)
	if err != nil {
		return err
	}
	args := []string{"worktree", "add", "--no-checkout", "--lock", "--reason", initializing}
	if exists {
		// Checked out in a worktree whose directory is gone? git needs
		// --force for exactly that case; any other checkout is refused.
		list, err := git.Worktrees(ctx, w.Repo)
		if err != nil {
			return err
		}
		for _, wt := range list {
			if wt.Branch != w.Branch {
				continue
			}
			if wt.Path == w.Path && wt.Prunable {
				args = append(args, "--force")
				continue
			}
			return fmt.Errorf("branch %s is checked out in %s; it cannot also be %s's worktree", w.Branch, wt.Path, w.TaskID)
		}
		args = append(args, w.Path, w.Branch)
	} else {
		args = append(args, "-b", w.Branch, w.Path, from)
	}
	if _, err := git.Run(ctx, w.Repo, args...); err != nil {
		return err
	}
	return m.checkout(ctx, w)
}

// toTheEnd returns ctx without its cancellation (its deadline kept): a
// worktree begun is made to its end, its checkout and hook included, as
// git's own add would be even when the daemon stops.
func toTheEnd(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(context.WithoutCancel(ctx), deadline)
	}
	return context.WithCancel(context.WithoutCancel(ctx))
}

// initializing is the reason git's `worktree add` locks a worktree with
// while it checks it out.
const initializing = "initializing"

// checkout finishes what `git worktree add --no-checkout --lock` left: as
// git's own add, it checks out the files and writes the index, drops the
// "initializing" lock and runs the post-checkout hook, in the new
// worktree. A daemon killed before the lock is dropped leaves a worktree
// the next provisioning makes again (remake.go).
//
// Git's add checks out with `reset --hard`, which with HEAD on the new
// branch leaves the branch where it is but still takes and drops locks on
// HEAD and the branch, writes ORIG_HEAD and starts the worktree's HEAD
// reflog with "reset: moving to HEAD". `read-tree --reset -u HEAD` is the
// part of it that matters here, the index and the files (the same ones:
// TestCheckoutIsGitsAdd), with five files fewer made and two fewer made
// and deleted per worktree.
func (m *Manager) checkout(ctx context.Context, w store.Worktree) error {
	if _, err := git.Run(ctx, w.Path, "read-tree", "--reset", "-u", "--no-recurse-submodules", "HEAD"); err != nil {
		return fmt.Errorf("checking out %s's worktree: %w", w.TaskID, err)
	}
	d, err := git.GitDirs(ctx, w.Path)
	if err != nil {
		return err
	}
	lock := filepath.Join(d.Own, "locked")
	if b, err := os.ReadFile(lock); err == nil && strings.TrimSpace(string(b)) == initializing {
		if err := os.Remove(lock); err != nil {
			return fmt.Errorf("unlocking %s's worktree: %w", w.TaskID, err)
		}
	}
	return m.postCheckout(ctx, w)
}

// postCheckout runs the repository's post-checkout hook in the new
// worktree with the arguments git's own add gives it (no previous HEAD,
// the new HEAD, a branch checkout), when there is one.
func (m *Manager) postCheckout(ctx context.Context, w store.Worktree) error {
	hooks, err := m.hooksDir(ctx, w.Repo)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Join(hooks, "post-checkout")); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil
	}
	head, err := git.RevParse(ctx, w.Path, "HEAD")
	if err != nil {
		return err
	}
	// A failing post-checkout hook fails git's own add too.
	_, err = git.Run(ctx, w.Path, "hook", "run", "--ignore-missing", "post-checkout", "--", strings.Repeat("0", len(head)), head, "1")
	return err
}

// linkedHere reports, from git's files alone, whether w's directory is
// one of its repository's linked worktrees, whole and unlocked: its .git
// file names an administrative directory in the repository's git
// directory whose gitdir names it back, and git holds no lock on it.
// Anything else is left to present's checks with git.
func linkedHere(w store.Worktree) bool {
	b, err := os.ReadFile(filepath.Join(w.Path, ".git"))
	if err != nil {
		return false
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(admin) {
		return false
	}
	if filepath.Dir(admin) != filepath.Join(w.Repo, ".git", "worktrees") {
		return false // a separate git directory: not this fast way
	}
	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil || filepath.Clean(strings.TrimSpace(string(back))) != filepath.Join(w.Path, ".git") {
		return false
	}
	if _, err := os.Lstat(filepath.Join(admin, "locked")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, err = os.Stat(filepath.Join(admin, "HEAD"))
	return err == nil
}
