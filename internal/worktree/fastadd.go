package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// Making a new task's worktree without `git worktree add`. Git's add reads
// every other worktree (twice: is the path registered, is the branch
// checked out), costs three git processes (worktree, branch, symbolic-ref)
// and cannot run beside another add (it dies on a half-made
// administrative directory), so at a thousand worktrees the adds queue
// for tens of seconds. A new task's worktree needs none of that: its
// branch is new (created only if absent), its path is new (checked
// absent) and its administrative name is the task id. So the Manager
// writes what git's add writes (builtin/worktree.c, add_worktree):
//
//	<common>/worktrees/<name>/locked     "initializing" (dropped after the checkout)
//	<common>/worktrees/<name>/gitdir     <path>/.git
//	<common>/worktrees/<name>/commondir  ../..
//	<common>/worktrees/<name>/HEAD       ref: refs/heads/<branch>
//	<path>/.git                          gitdir: <common>/worktrees/<name>
//
// The administrative directory is written whole in
// <common>/neuraphage/adding/<name> and renamed into worktrees/ (never over
// one that exists), so no git, ours or the user's, ever reads a half-made
// one and nothing needs to wait for anything. The checkout, the unlock and
// the post-checkout hook are then checkout's, as after git's add.
//
// A kill at any point leaves one of: a directory in adding/ (removed by
// Reconcile or the next attempt; git never sees it); the worktree's
// directory with a .git naming an administrative directory that does not
// exist yet (unborn: removed by present, then the worktree is made again);
// or a worktree locked "initializing", which is exactly what a killed
// `git worktree add` leaves (remade, remake.go). `git worktree prune`
// never has anything of ours to mistake.
//
// Anything out of the ordinary goes to git's own add: sparse checkouts and
// per-worktree config (git copies them into the new worktree), a name git
// would sanitize, a platform without an atomic no-replace rename, a name
// already taken.

// errSlow says a worktree must be made by git's own add; nothing was
// changed.
var errSlow = errors.New("left to git worktree add")

// branchError is the failed creation of the new branch.
type branchError struct{ err error }

func (e branchError) Error() string { return e.err.Error() }
func (e branchError) Unwrap() error { return e.err }

// errStopped is what fastAdd returns when Manager.stop stopped it.
var errStopped = errors.New("stopped (test)")

// plainName is an administrative name git would keep as it is.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// addingDir is where administrative directories are written before they
// are renamed into <common>/worktrees.
func addingDir(common string) string { return filepath.Join(common, "neuraphage", "adding") }

// fastAdd makes w's worktree on a new branch at the commit from, as
// `git worktree add --no-checkout --lock --reason initializing -b` does,
// then checks it out (checkout). errSlow leaves it to git's add: nothing
// was changed, or (a name taken meanwhile) only the branch was made, which
// addNew's git add then takes as it is. A failed creation of the branch is
// a branchError.
func (m *Manager) fastAdd(ctx context.Context, w store.Worktree, r git.Repo, from string) error {
	name := filepath.Base(w.Path)
	common, err := filepath.EvalSymlinks(r.CommonDir)
	if err != nil || !plainName.MatchString(name) || strings.HasSuffix(name, ".lock") || !renameAtomic {
		return errSlow
	}
	if ok, err := m.plainConfig(ctx, w.Repo, common); err != nil || !ok {
		return errSlow
	}
	admin := filepath.Join(common, "worktrees", name)
	if _, err := os.Lstat(admin); !errors.Is(err, fs.ErrNotExist) {
		return errSlow
	}
	tmp := filepath.Join(addingDir(common), name)
	if err := os.RemoveAll(tmp); err != nil { // a killed attempt's
		return errSlow
	}
	// The branch first, as git's add makes it (`git branch`) before its
	// files: created only if absent (with the branches of other provisions
	// asked for meanwhile, in one transaction).
	if err := m.branches.Create(ctx, w.Repo, "branch: Created from "+from, "refs/heads/"+w.Branch, from); err != nil {
		return branchError{err}
	}
	if m.stopAt("branch") {
		return errStopped
	}
	files := []struct{ name, body string }{
		{"locked", initializing},
		{"gitdir", filepath.Join(w.Path, ".git")},
		{"commondir", "../.."},
		{"HEAD", "ref: refs/heads/" + w.Branch},
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("making %s's worktree: %w", w.TaskID, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.name), []byte(f.body+"\n"), 0o644); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("making %s's worktree: %w", w.TaskID, err)
		}
	}
	if m.stopAt("admin") {
		return errStopped
	}
	undo := func() {
		os.Remove(filepath.Join(w.Path, ".git"))
		os.Remove(w.Path)
		os.RemoveAll(tmp)
	}
	if err := os.Mkdir(w.Path, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("making %s's worktree: %w", w.TaskID, err)
	}
	if err := os.WriteFile(filepath.Join(w.Path, ".git"), []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
		undo()
		return fmt.Errorf("making %s's worktree: %w", w.TaskID, err)
	}
	if m.stopAt("dotgit") {
		return errStopped
	}
	if err := os.MkdirAll(filepath.Dir(admin), 0o755); err != nil {
		undo()
		return fmt.Errorf("making %s's worktree: %w", w.TaskID, err)
	}
	if err := renameNoReplace(tmp, admin); err != nil {
		// Taken meanwhile (by the user's `git worktree add` of a
		// directory of the same name): git's add picks another name.
		undo()
		return errSlow
	}
	if m.stopAt("registered") {
		return errStopped
	}
	return m.checkout(ctx, w)
}

// stopAt reports whether the test hook m.stop stops fastAdd at step, as a
// kill would: nothing after it done and nothing undone.
func (m *Manager) stopAt(step string) bool { return m.stop != nil && m.stop(step) }

// plainConfig reports whether git's add would copy nothing into a new
// worktree of the repository: no sparse checkout, no per-worktree config.
// The repository's own config file is read each time (a stat and a small
// read); the settings from elsewhere (global config, includes) are asked
// of git once per repository.
func (m *Manager) plainConfig(ctx context.Context, repo, common string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil {
		return false, err
	}
	low := strings.ToLower(string(b))
	if strings.Contains(low, "sparsecheckout") || strings.Contains(low, "worktreeconfig") {
		return false, nil
	}
	if _, err := os.Lstat(filepath.Join(common, "config.worktree")); err == nil {
		return false, nil
	}
	get := func() (bool, bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		ok, known := m.plain[repo]
		return ok, known
	}
	return askOnce(m, ctx, "plain\x00"+repo, get, func(ctx context.Context) (bool, error) {
		out, err := git.Run(ctx, repo, "config", "--get-regexp", `^(core\.sparsecheckout|extensions\.worktreeconfig)$`)
		var gerr *git.Error
		ok := false
		switch {
		case err == nil:
			ok = strings.TrimSpace(out) == ""
		case errors.As(err, &gerr) && gerr.ExitCode == 1: // none set
			ok = true
		default:
			return false, err
		}
		m.mu.Lock()
		m.plain[repo] = ok
		m.mu.Unlock()
		return ok, nil
	})
}

// unborn reports whether w's directory is what a fastAdd killed before
// the rename left: a .git naming w's administrative directory, which does
// not exist, and nothing else. It removes it then.
func unborn(w store.Worktree) (bool, error) {
	b, err := os.ReadFile(filepath.Join(w.Path, ".git"))
	if err != nil {
		return false, nil
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(admin) || filepath.Base(admin) != filepath.Base(w.Path) || filepath.Base(filepath.Dir(admin)) != "worktrees" {
		return false, nil
	}
	if _, err := os.Lstat(admin); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	ents, err := os.ReadDir(w.Path)
	if err != nil || len(ents) != 1 {
		return false, nil
	}
	if err := os.Remove(filepath.Join(w.Path, ".git")); err != nil {
		return false, err
	}
	if err := os.Remove(w.Path); err != nil {
		return false, err
	}
	os.RemoveAll(filepath.Join(addingDir(filepath.Dir(filepath.Dir(admin))), filepath.Base(admin)))
	return true, nil
}

// unmade makes w's worktree whose creation was cut short before git knew
// of it (its record written, perhaps its branch, nothing else; or what
// unborn removed): the branch from the base commit when it is missing,
// the worktree, the task's record, worktree.created, the bootstrap.
func (m *Manager) unmade(ctx context.Context, w store.Worktree) (store.Worktree, error) {
	start := m.now()
	from, err := m.ensureBranch(ctx, w)
	if err != nil {
		m.setNote(ctx, &w, err.Error())
		return w, err
	}
	if err := m.add(ctx, w, from); err != nil {
		return w, err
	}
	return m.finishCreate(ctx, w, start)
}
