package worktree

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Stale git locks. git dies with the daemon that ran it (the parent-death
// signal), and a git killed half way leaves its lock files: a ref's
// (refs/heads/neuraphage/<id>.lock), packed-refs.lock, a worktree's
// index.lock or CHERRY_PICK_HEAD.lock. Every later git needing that lock
// fails on it, so at start, before any git work, the daemon clears them:
//
//   - a lock in a place only the daemon and its tasks use — a task branch
//     (refs/heads/neuraphage/…), the daemon's own refs (refs/neuraphage/…),
//     the administrative directory of a task's worktree — is the daemon's
//     while no task runs, and is removed;
//   - a lock in a shared place (packed-refs.lock, the main checkout's
//     index.lock or HEAD.lock, refs/heads/main.lock, a user's own worktree)
//     is removed only when provably stale: older than this start, and no
//     live process on the machine has the repository (its git directory or
//     any of its work trees) as working directory or a file in it open.
//     Otherwise it is left and reported.
//
// Every lock found is reported: a git.stale_lock event and a log line
// naming the file, removed or not and why.

// usersGrace is how long a shared lock waits for processes using the
// repository to go: a hook a killed git started (its `sleep`) outlives it
// by a moment.
var usersGrace = 3 * time.Second

// ClearStaleLocks removes the lock files git left in the repositories of
// the registered worktrees as described above. It must run before any task
// runs and before the daemon runs git in those repositories; locks modified
// at or after before are never taken as stale. It returns what it found.
func (m *Manager) ClearStaleLocks(ctx context.Context, before time.Time) ([]event.GitStaleLock, error) {
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	paths := map[string]map[string]task.ID{} // repo → worktree path → task
	for _, w := range ws {
		if paths[w.Repo] == nil {
			paths[w.Repo] = map[string]task.ID{}
		}
		paths[w.Repo][filepath.Clean(w.Path)] = w.TaskID
	}
	var out []event.GitStaleLock
	for _, repo := range slices.Sorted(maps.Keys(paths)) {
		if _, err := os.Stat(repo); err != nil {
			continue
		}
		found, err := m.clearRepoLocks(ctx, repo, paths[repo], before)
		out = append(out, found...)
		if err != nil {
			m.log.Warn("clearing stale git locks", "repo", repo, "err", err)
		}
	}
	return out, nil
}

func (m *Manager) clearRepoLocks(ctx context.Context, repo string, tasks map[string]task.ID, before time.Time) ([]event.GitStaleLock, error) {
	r, err := git.Inspect(ctx, repo)
	if err != nil {
		return nil, err
	}
	locks, err := git.LockFiles(r.CommonDir)
	if err != nil || len(locks) == 0 {
		return nil, err
	}
	// The administrative directories of the tasks' worktrees, by name.
	admin := map[string]task.ID{}
	for _, d := range adminDirs(r.CommonDir) {
		if id, ok := tasks[d.workTree]; ok {
			admin[d.name] = id
		}
	}
	var out []event.GitStaleLock
	report := func(l git.LockFile, id task.ID, removed bool, reason string) {
		ev := event.GitStaleLock{Repo: r.Main, Lock: l.Path, Removed: removed, Reason: reason}
		out = append(out, ev)
		m.emit(ctx, id, ev)
		if removed {
			m.log.Warn("stale git lock removed", "lock", l.Path, "task_id", id, "reason", reason)
		} else {
			m.log.Warn("git lock left in place", "lock", l.Path, "task_id", id, "reason", reason)
		}
	}
	var shared []git.LockFile
	for _, l := range locks {
		id, ours := ownedLock(l.Rel, admin)
		if !ours {
			shared = append(shared, l)
			continue
		}
		if err := git.RemoveLock(l); err != nil {
			report(l, id, false, err.Error())
			continue
		}
		report(l, id, true, "left by a git killed with the daemon, in a place only the daemon and its tasks use, and no task runs yet")
	}
	if len(shared) == 0 {
		return out, nil
	}
	dirs := git.RepoDirs(r.CommonDir, r.Main)
	users, uerr := git.Users(dirs)
	for deadline := time.Now().Add(usersGrace); uerr == nil && len(users) > 0 && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		users, uerr = git.Users(dirs)
	}
	for _, l := range shared {
		switch {
		case !l.ModTime.Before(before):
			report(l, "", false, "made after this daemon started: another git may hold it")
		case uerr != nil:
			report(l, "", false, uerr.Error()+"; remove it by hand if no git runs there")
		case len(users) > 0:
			report(l, "", false, "a live process uses the repository and may hold it: "+describeUsers(users)+"; remove it by hand once that git has finished")
		default:
			if err := git.RemoveLock(l); err != nil {
				report(l, "", false, err.Error())
				continue
			}
			report(l, "", true, fmt.Sprintf("older than this start (%s) and no live process uses the repository", l.ModTime.UTC().Format(time.RFC3339)))
		}
	}
	return out, nil
}

func describeUsers(ps []git.Proc) string {
	var s []string
	for i, p := range ps {
		if i == 3 {
			s = append(s, fmt.Sprintf("and %d more", len(ps)-3))
			break
		}
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

// ownedLock reports whether the lock at rel (relative to the common git
// directory) is in a place only the daemon and its tasks use, and the task
// it belongs to when it is known.
func ownedLock(rel string, admin map[string]task.ID) (task.ID, bool) {
	for _, p := range []string{"refs/heads/" + BranchPrefix, "logs/refs/heads/" + BranchPrefix} {
		if rest, ok := strings.CutPrefix(rel, p); ok {
			id, _, _ := strings.Cut(strings.TrimSuffix(rest, ".lock"), "/")
			return task.ID(id), true
		}
	}
	if strings.HasPrefix(rel, "refs/neuraphage/") || strings.HasPrefix(rel, "logs/refs/neuraphage/") {
		return "", true
	}
	if rest, ok := strings.CutPrefix(rel, "worktrees/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		if id, ok := admin[name]; ok {
			return id, true
		}
	}
	return "", false
}

// adminDir is the administrative directory of a linked worktree.
type adminDir struct {
	name     string // under <common dir>/worktrees/
	workTree string // the work tree it belongs to
}

func adminDirs(commonDir string) []adminDir {
	ents, _ := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	var out []adminDir
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(commonDir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if p := strings.TrimSpace(string(b)); p != "" {
			out = append(out, adminDir{name: e.Name(), workTree: filepath.Dir(filepath.Clean(p))})
		}
	}
	return out
}

// ClearFinishedPick removes a CHERRY_PICK_HEAD left in a landed worktree
// by the queue's finished rebase: with packed-refs.lock stale, git could
// not delete it after the pick was committed, and the worktree then looks
// like it holds a cherry-pick in progress, which its cleanup refuses. Only
// a worktree whose work landed, with no rebase or sequence in progress, no
// conflict and no changed file, is touched, and only that ref is deleted
// (compared to the value read): nothing in the work tree changes. It
// reports whether it removed one.
func (m *Manager) ClearFinishedPick(ctx context.Context, id task.ID) (bool, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil || w.Landed == "" || w.State != store.WorktreeActive {
		return false, err
	}
	if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
		return false, nil
	}
	var cleared bool
	err = git.Locked(ctx, w.Repo, func(ctx context.Context) error {
		st, err := git.WorkStatus(ctx, w.Path)
		if err != nil || st.InProgress != "cherry-pick" || len(st.Changed) > 0 {
			return err
		}
		gd, err := git.Run(ctx, w.Path, "rev-parse", "--path-format=absolute", "--git-dir")
		if err != nil {
			return err
		}
		for _, d := range []string{"sequencer", "rebase-merge", "rebase-apply"} {
			if _, err := os.Stat(filepath.Join(strings.TrimSpace(gd), d)); err == nil {
				return nil
			}
		}
		pick, err := git.RevParse(ctx, w.Path, "CHERRY_PICK_HEAD")
		if err != nil {
			return err
		}
		if _, err := git.Run(ctx, w.Path, "update-ref", "-d", "CHERRY_PICK_HEAD", pick); err != nil {
			return err
		}
		cleared = true
		m.log.Warn("CHERRY_PICK_HEAD left by a finished rebase removed from a landed worktree", "task_id", id, "path", w.Path, "pick", pick)
		return nil
	})
	return cleared, err
}

// RestoreInterruptedRemoval puts back the files a `git worktree remove`
// killed half way (with the daemon) deleted from a landed worktree: its
// tracked files are missing, so the next removal saw "changed files" and
// refused for good. Only a landed worktree whose every change is a tracked
// file missing from the work tree (the index as at HEAD) is touched, and
// only by writing the missing files from the index (`git checkout-index
// -a`, which never overwrites a file): nothing is lost, and the removal can
// then go through its usual checks. A .git file the killed removal deleted
// is written again when git still has the worktree's own directory. It reports whether it restored anything.
func (m *Manager) RestoreInterruptedRemoval(ctx context.Context, id task.ID) (bool, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil || w.Landed == "" || w.State != store.WorktreeActive {
		return false, err
	}
	if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
		return false, nil
	}
	var restored bool
	err = git.Locked(ctx, w.Repo, func(ctx context.Context) error {
		if _, err := os.Lstat(filepath.Join(w.Path, ".git")); err != nil {
			r, err := git.Inspect(ctx, w.Repo)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(adminDirs(r.CommonDir), func(d adminDir) bool { return d.workTree == filepath.Clean(w.Path) })
			if i < 0 {
				return nil
			}
			// What `git worktree add` writes there (`git worktree repair`
			// cannot mend a .git file that is gone).
			admin := filepath.Join(r.CommonDir, "worktrees", adminDirs(r.CommonDir)[i].name)
			if err := os.WriteFile(filepath.Join(w.Path, ".git"), []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
				return err
			}
			restored = true
		}
		out, err := git.Run(ctx, w.Path, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no")
		if err != nil {
			return err
		}
		var missing int
		for _, rec := range strings.Split(out, "\x00") {
			if rec == "" {
				continue
			}
			if !strings.HasPrefix(rec, " D ") {
				return nil // another change: not what a removal leaves
			}
			missing++
		}
		if missing == 0 {
			return nil
		}
		if _, err := git.Run(ctx, w.Path, "checkout-index", "-a", "-q"); err != nil {
			return err
		}
		restored = true
		m.log.Warn("files deleted by a worktree removal killed half way put back", "task_id", id, "path", w.Path, "files", missing)
		return nil
	})
	return restored, err
}
