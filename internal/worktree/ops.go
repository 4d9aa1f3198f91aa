package worktree

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// identity returns the environment that signs a commit made for a task.
func (m *Manager) identity(ctx context.Context, dir string) []string {
	return git.Identity(ctx, dir, m.cfg.AuthorName, m.cfg.AuthorEmail)
}

// Commit commits everything uncommitted in the task's worktree (changes
// and untracked files; ignored files stay as they are) on its branch with
// message. It returns the branch tip and whether a commit was made.
func (m *Manager) Commit(ctx context.Context, id task.ID, message string) (string, bool, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil {
		return "", false, err
	}
	if w.State != store.WorktreeActive {
		return "", false, fmt.Errorf("%s's worktree was removed; `neuraphage worktree restore %s` brings it back", id, id)
	}
	st, err := git.WorkStatus(ctx, w.Path)
	if err != nil {
		return "", false, err
	}
	if st.InProgress != "" {
		return "", false, fmt.Errorf("%s has a %s in progress; finish or abort it first", w.Path, st.InProgress)
	}
	if len(st.Changed) == 0 && len(st.Untracked) == 0 {
		if st.Head == "" {
			return "", false, fmt.Errorf("%s: HEAD: %w", w.Path, git.ErrNoRef)
		}
		return st.Head, false, nil
	}
	if strings.TrimSpace(message) == "" {
		message = "neuraphage: work of " + string(id)
	}
	files := len(st.Changed) + len(st.Untracked)
	err = git.Locked(ctx, w.Path, func(ctx context.Context) error {
		if _, err := git.Run(ctx, w.Path, "add", "-A"); err != nil {
			return err
		}
		_, err := git.RunEnv(ctx, w.Path, m.identity(ctx, w.Path), "commit", "-q", "-m", message)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("committing %s's work: %w", id, err)
	}
	tip, err := git.RevParse(ctx, w.Path, "HEAD")
	if err != nil {
		return "", false, err
	}
	m.emit(ctx, id, event.CommitMade{Branch: w.Branch, Commit: tip, Files: files, Message: words.FirstLine(message)})
	m.log.Info("task work committed", "task_id", id, "commit", tip, "files", files)
	return tip, true, nil
}

// Info is a worktree record with what is on disk now.
type Info struct {
	store.Worktree
	// Exists: the directory is there.
	Exists bool `json:"exists"`
	// Status of the work tree when it exists.
	Changed    []string `json:"changed,omitempty"`
	Untracked  []string `json:"untracked,omitempty"`
	InProgress string   `json:"in_progress,omitempty"`
	// Ignored are the ignored files removal would keep: created or changed
	// since provisioning, not build output.
	Ignored []string `json:"ignored,omitempty"`
	// Tip is the branch's commit ("" when the branch is gone).
	Tip string `json:"tip,omitempty"`
	// Ahead and Behind count commits against the base branch.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// Merged: the branch's work is on the base branch (ancestor, or the
	// tip that landed as a squash).
	Merged bool `json:"merged"`
	// Archived: the archive ref holds the branch tip (or the branch is
	// gone and the archive holds its last tip).
	Archived bool `json:"archived"`
	// Stray marks a worktree on a neuraphage branch that the registry does
	// not know.
	Stray bool `json:"stray,omitempty"`
}

// Inspect returns a task's worktree as recorded and as it is on disk.
func (m *Manager) Inspect(ctx context.Context, id task.ID) (Info, error) {
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil {
		return Info{}, err
	}
	return m.inspect(ctx, w)
}

func (m *Manager) inspect(ctx context.Context, w store.Worktree) (Info, error) {
	in, _, err := m.inspectDisk(ctx, w)
	if err != nil {
		return in, err
	}
	if in.Exists {
		if in.Ignored, err = m.keptIgnored(ctx, w); err != nil {
			return in, err
		}
	}
	return in, m.inspectRefs(ctx, &in)
}

// inspectDisk is inspect's work tree status (without the ignored files),
// with the status read.
func (m *Manager) inspectDisk(ctx context.Context, w store.Worktree) (Info, git.Status, error) {
	in := Info{Worktree: w}
	var st git.Status
	if w.State == store.WorktreeActive {
		if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
			in.Exists = true
			var err error
			if st, err = git.WorkStatus(ctx, w.Path); err != nil {
				return in, st, err
			}
			in.Changed, in.Untracked, in.InProgress = st.Changed, st.Untracked, st.InProgress
		}
	}
	return in, st, nil
}

// inspectRemoval is what remove needs of inspect: the work tree's status,
// the branch tip and, with keepUnmerged, whether it is merged. The
// ignored files are listed by the removal itself, right before the
// worktree goes. A worktree on its branch names the tip in its status, and
// a tip recorded as landed is merged: then git is asked nothing more.
func (m *Manager) inspectRemoval(ctx context.Context, w store.Worktree, keepUnmerged bool) (Info, error) {
	in, st, err := m.inspectDisk(ctx, w)
	if err != nil {
		return in, err
	}
	if in.Exists && st.Branch == w.Branch && st.Head != "" {
		in.Tip = st.Head
		in.Merged = w.LandedTip != "" && w.LandedTip == in.Tip
		if in.Merged || !keepUnmerged {
			return in, nil
		}
	}
	return in, m.inspectRefs(ctx, &in)
}

// inspectRefs fills in's branch tip, archive and merge state from the
// repository's refs.
func (m *Manager) inspectRefs(ctx context.Context, in *Info) error {
	w := in.Worktree
	var err error
	base := "refs/heads/" + w.Base
	// One git for the branch, its archive and the base.
	tips, err := git.Tips(ctx, w.Repo, "refs/heads/"+w.Branch, ArchiveRef(w.TaskID), base)
	if err != nil {
		return err
	}
	tip, archived := tips[0], tips[1]
	in.Tip = tip
	in.Archived = archived != "" && (tip == "" || archived == tip)
	if tip == "" {
		// The branch was deleted: merged if its work landed (or its
		// archived tip is on the base).
		in.Merged = w.Landed != ""
		if !in.Merged && archived != "" {
			in.Merged, _ = git.IsAncestor(ctx, w.Repo, archived, base)
		}
		return nil
	}
	if tips[2] != tip { // on the base, nothing is ahead or behind
		if in.Ahead, in.Behind, err = git.AheadBehind(ctx, w.Repo, base, tip); err != nil {
			return err
		}
	}
	in.Merged = in.Ahead == 0 || (w.LandedTip != "" && w.LandedTip == tip)
	return nil
}

// List returns every worktree record with its state on disk, and the
// stray worktrees found in the registry's repositories.
func (m *Manager) List(ctx context.Context) ([]Info, error) {
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(ws))
	repos := map[string]bool{}
	for _, w := range ws {
		in, err := m.inspect(ctx, w)
		if err != nil {
			in.Note = strings.TrimSpace(in.Note + " " + err.Error())
		}
		out = append(out, in)
		repos[w.Repo] = true
	}
	for _, repo := range slices.Sorted(maps.Keys(repos)) {
		m.clearLeftovers(ctx, repo)
		strays, err := m.strays(ctx, repo, ws)
		if err != nil {
			continue // the repository may be gone; its records still list
		}
		for _, s := range strays {
			out = append(out, Info{Worktree: store.Worktree{Repo: repo, Path: s.Path, Branch: s.Branch, State: store.WorktreeActive}, Exists: true, Stray: true})
		}
	}
	return out, nil
}

// strays returns the worktrees of repo on neuraphage branches, or under the
// worktree root, that no record names.
func (m *Manager) strays(ctx context.Context, repo string, known []store.Worktree) ([]git.WorktreeInfo, error) {
	list, err := git.Worktrees(ctx, repo)
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, w := range known {
		if w.State == store.WorktreeActive {
			paths[w.Path] = true
		}
	}
	root := m.root(repo) + string(filepath.Separator)
	var out []git.WorktreeInfo
	for _, wt := range list {
		if paths[wt.Path] || wt.Path == repo {
			continue
		}
		if strings.HasPrefix(wt.Branch, BranchPrefix) || strings.HasPrefix(wt.Path, root) {
			out = append(out, wt)
		}
	}
	return out, nil
}

// Report is what Reconcile found and did.
type Report struct {
	Checked   int
	Recreated []task.ID
	// Remade are worktrees whose creation a killed daemon left half done,
	// made again.
	Remade []task.ID
	// Problems are records that could not be brought back, with why.
	Problems map[task.ID]string
	Strays   []git.WorktreeInfo
}

// Reconcile compares the registry with the repositories at daemon start:
// an active worktree whose directory is gone is recreated from its branch
// (or archive); a worktree on a neuraphage branch the registry does not
// know is reported (an event) and left alone. Nothing is deleted.
func (m *Manager) Reconcile(ctx context.Context) (Report, error) {
	rep := Report{Problems: map[task.ID]string{}}
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return rep, err
	}
	repos := map[string]bool{}
	for _, w := range ws {
		repos[w.Repo] = true
		if w.State != store.WorktreeActive {
			continue
		}
		rep.Checked++
		m.holdPort(w)
		err := func() error {
			defer m.lockTask(w.TaskID)()
			ok, err := m.present(ctx, w)
			if errors.Is(err, errHalfMade) {
				if _, err := m.remake(ctx, w); err != nil {
					return err
				}
				rep.Remade = append(rep.Remade, w.TaskID)
				return nil
			}
			if err != nil || ok {
				return err
			}
			if _, err := os.Stat(w.Repo); err != nil {
				return fmt.Errorf("its repository %s is gone", w.Repo)
			}
			if !m.everCreated(ctx, w) {
				_, err := m.unmade(ctx, w) // cut short before anything was made
				return err
			}
			if _, err := m.recreate(ctx, w, "its directory was missing at daemon start"); err != nil {
				return err
			}
			rep.Recreated = append(rep.Recreated, w.TaskID)
			return nil
		}()
		if err != nil {
			rep.Problems[w.TaskID] = err.Error()
			cur := w
			m.setNote(ctx, &cur, err.Error())
			m.log.Warn("worktree not reconciled", "task_id", w.TaskID, "path", w.Path, "err", err)
		}
	}
	for _, repo := range slices.Sorted(maps.Keys(repos)) {
		m.clearLeftovers(ctx, repo)
		strays, err := m.strays(ctx, repo, ws)
		if err != nil {
			continue
		}
		for _, s := range strays {
			rep.Strays = append(rep.Strays, s)
			m.emit(ctx, "", event.WorktreeStray{Repo: repo, Path: s.Path, Branch: s.Branch})
			m.log.Warn("stray worktree left alone", "repo", repo, "path", s.Path, "branch", s.Branch)
		}
	}
	m.recoverObjects(ctx, ws)
	return rep, nil
}

// RefusedError says why a worktree was not removed.
type RefusedError struct {
	TaskID task.ID
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s's worktree was not removed: %s", e.TaskID, e.Reason)
}

// Remove removes a task's worktree if that cannot lose work: nothing
// uncommitted or untracked, no operation in progress. The branch tip is
// archived first; a branch whose work is merged is then deleted, one that
// is not is deleted too (its tip stays in the archive) only when
// keepUnmerged is false. A refusal is a *RefusedError saying why.
func (m *Manager) Remove(ctx context.Context, id task.ID, reason string, keepUnmerged bool) (store.Worktree, error) {
	w, _, err := m.remove(ctx, id, reason, keepUnmerged)
	return w, err
}

// remove is Remove, returning the removal's event too.
func (m *Manager) remove(ctx context.Context, id task.ID, reason string, keepUnmerged bool) (w store.Worktree, ev event.WorktreeRemoved, err error) {
	defer m.lockTask(id)()
	w, err = m.st.GetWorktree(ctx, id)
	if err != nil {
		return w, ev, err
	}
	if w.State == store.WorktreeRemoved {
		return w, ev, nil
	}
	in, err := m.inspectRemoval(ctx, w, keepUnmerged)
	if err != nil {
		return w, ev, err
	}
	if in.Exists {
		if st := (git.Status{Changed: in.Changed, Untracked: in.Untracked, InProgress: in.InProgress}); !st.Clean() {
			return w, ev, &RefusedError{TaskID: id, Reason: fmt.Sprintf("%s holds %s; commit or remove them, then prune again", w.Path, st.Describe())}
		}
	}
	ev = event.WorktreeRemoved{Path: w.Path, Branch: w.Branch, Reason: reason}
	if in.Exists {
		// Ignored files made since provisioning are kept first, listed
		// right before the worktree goes (listed again only while copying
		// finds new ones: one written meanwhile is kept too); a copy that
		// fails keeps the worktree. git's own check of the work tree comes
		// last (removeLinked).
		kept := &keeping{}
		if err := m.keepIgnored(ctx, w, kept, nil); err != nil {
			return w, ev, &RefusedError{TaskID: id, Reason: err.Error()}
		}
		ev.Kept, ev.KeptIn = kept.files(), kept.dir
		if err := m.removeLinked(ctx, w); err != nil {
			return w, ev, &RefusedError{TaskID: id, Reason: "git refused to remove it: " + err.Error()}
		}
	} else {
		// Its directory is already gone: clear git's record of it only.
		if list, err := git.Worktrees(ctx, w.Repo); err == nil {
			for _, wt := range list {
				if wt.Path == w.Path && wt.Prunable {
					if _, err := git.Run(ctx, w.Repo, "worktree", "remove", "--force", w.Path); err != nil {
						m.log.Warn("clearing a missing worktree's record", "path", w.Path, "err", err)
					}
				}
			}
		}
	}
	if in.Tip != "" {
		// Keep the tip, merged or not (restoring is always possible), and
		// delete the branch in the same transaction when it goes.
		archived, deleted, err := m.archiveTip(ctx, w, in.Tip, in.Merged || !keepUnmerged)
		if err != nil {
			// The branch is still there, holding the tip.
			m.log.Warn("branch tip not archived; the branch is kept", "task_id", id, "branch", w.Branch, "err", err)
		}
		if archived {
			w.Archive, ev.Archive = ArchiveRef(id), ArchiveRef(id)
		}
		ev.BranchDeleted = deleted
	}
	w.State, w.Note, w.UpdatedAt = store.WorktreeRemoved, "", m.now().UTC()
	if _, err := m.st.PutWorktree(ctx, w, event.New(m.now(), id, ev)); err != nil {
		return w, ev, err
	}
	m.releaseObjects(w)
	m.mu.Lock()
	if m.ports[w.Port] == id {
		delete(m.ports, w.Port)
	}
	m.mu.Unlock()
	m.log.Info("worktree removed", "task_id", id, "path", w.Path, "branch_deleted", ev.BranchDeleted, "reason", reason)
	return w, ev, nil
}

// PruneResult is what Prune did with one worktree.
type PruneResult struct {
	TaskID  task.ID `json:"task_id"`
	Path    string  `json:"path"`
	Removed bool    `json:"removed"`
	Reason  string  `json:"reason"`
}

// Prune removes the worktrees of finished tasks (completed, failed,
// cancelled) where that loses nothing: each branch tip is archived first;
// a worktree with uncommitted or untracked files is kept and reported.
// Worktrees of tasks still in flight are not touched.
func (m *Manager) Prune(ctx context.Context) ([]PruneResult, error) {
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []PruneResult
	for _, w := range ws {
		if w.State != store.WorktreeActive {
			continue
		}
		t, err := m.st.GetTask(ctx, w.TaskID)
		if err != nil {
			return out, err
		}
		if !t.Status.Terminal() {
			continue
		}
		res := PruneResult{TaskID: w.TaskID, Path: w.Path}
		_, rw, err := m.remove(ctx, w.TaskID, "pruned ("+string(t.Status)+")", false)
		if err != nil {
			res.Reason = err.Error()
			var re *RefusedError
			if errors.As(err, &re) {
				res.Reason = re.Reason
			}
		} else {
			res.Removed, res.Reason = true, "removed; branch tip kept under "+ArchiveRef(w.TaskID)
			if len(rw.Kept) > 0 {
				res.Reason += fmt.Sprintf("; %d ignored file(s) kept in %s (%s)", len(rw.Kept), rw.KeptIn, strings.Join(rw.Kept, ", "))
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// MarkLanded records that the branch's work landed on its base as commit,
// from branch tip tip.
func (m *Manager) MarkLanded(ctx context.Context, id task.ID, commit, tip string) error {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil {
		return err
	}
	w.Landed, w.LandedTip, w.UpdatedAt = commit, tip, m.now().UTC()
	_, err = m.st.PutWorktree(ctx, w)
	return err
}

// LandedActive returns the active worktrees whose branch's work landed
// (MarkLanded): those a cleanup after landing has still to remove.
func (m *Manager) LandedActive(ctx context.Context) ([]store.Worktree, error) {
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []store.Worktree
	for _, w := range ws {
		if w.State == store.WorktreeActive && w.Landed != "" {
			out = append(out, w)
		}
	}
	return out, nil
}

// archiveTip points the task's archive ref at tip and, with del, deletes
// the task's branch from tip, in one transaction (one git); a branch that
// moved since tip was read is kept (compare-and-delete) and the archive
// made alone. The archive refs are the daemon's alone and a task's are
// touched only under its operation lock (lockTask), so a lock file on one
// is left by a git killed with an earlier daemon (half way through
// archiving): it is removed, or no later removal could finish.
func (m *Manager) archiveTip(ctx context.Context, w store.Worktree, tip string, del bool) (archived, deleted bool, err error) {
	d, err := git.GitDirs(ctx, w.Repo)
	if err != nil {
		return false, false, err
	}
	lock := filepath.Join(d.Common, filepath.FromSlash(ArchiveRef(w.TaskID))+".lock")
	if err := os.Remove(lock); err == nil {
		m.log.Warn("stale lock of an archive ref removed (left by a git killed with the daemon)", "task_id", w.TaskID, "lock", lock)
	}
	archive := git.RefUpdate{Ref: ArchiveRef(w.TaskID), New: tip}
	if del {
		err := git.UpdateRefs(ctx, w.Repo, archive, git.RefUpdate{Ref: "refs/heads/" + w.Branch, Old: tip, Delete: true})
		if err == nil {
			return true, true, nil
		}
		m.log.Warn("branch kept", "branch", w.Branch, "err", err)
	}
	if err := git.UpdateRefs(ctx, w.Repo, archive); err != nil {
		return false, false, err
	}
	return true, false, nil
}

// keeping is what keepIgnored archived of one worktree: each file with the
// size, mode and time it had when copied.
type keeping struct {
	dir   string
	stamp map[string]string
}

func (k keeping) files() []string {
	if len(k.stamp) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(k.stamp))
}

func stampOf(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %v %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
}

// keepRounds bounds how often keepIgnored lists again while files change.
const keepRounds = 8

// keepIgnored archives w's ignored files worth keeping (listed, or given)
// that k has not archived as they are now, and lists them again until a
// listing finds nothing new: a file written while others were copied is
// kept too. Files that go on changing for keepRounds listings are an error
// (something is still writing in the worktree; nothing may be removed).
func (m *Manager) keepIgnored(ctx context.Context, w store.Worktree, k *keeping, files []string) error {
	if k.stamp == nil {
		k.stamp = map[string]string{}
	}
	for round := 0; ; round++ {
		if files == nil {
			var err error
			if files, err = m.keptIgnored(ctx, w); err != nil {
				return err
			}
		}
		var fresh []string
		stamps := map[string]string{}
		for _, f := range files {
			st := stampOf(filepath.Join(w.Path, filepath.FromSlash(f)))
			if st == "" || k.stamp[f] == st {
				continue
			}
			fresh, stamps[f] = append(fresh, f), st
		}
		if len(fresh) == 0 {
			return nil
		}
		if round == keepRounds {
			return fmt.Errorf("ignored files in %s keep changing (%s); something is still writing there", w.Path, strings.Join(fresh, ", "))
		}
		dir, err := m.archiveIgnored(ctx, w, fresh)
		if err != nil {
			return err
		}
		k.dir = dir
		maps.Copy(k.stamp, stamps)
		files = nil
		if m.keptRound != nil {
			m.keptRound(round)
		}
	}
}
