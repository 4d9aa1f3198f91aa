package worktree

import (
	"context"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Each task's git writes objects in a directory of its own
// (<git-common-dir>/neuraphage/objects/<task-id>, see internal/sandbox),
// listed in the shared store's alternates while one of its commands runs,
// its objects moved into the shared store when each ends. Provision makes
// it; removing the worktree moves what is left into the shared store, then
// ends it; Reconcile finishes at start what a killed daemon left.

// provideObjects makes w's object directory when missing: its commands
// write objects there, so a failure stops the provisioning rather than let
// them write in the shared store.
func (m *Manager) provideObjects(w store.Worktree) error {
	common := sandbox.CommonDir(w.Repo)
	if common == "" {
		return fmt.Errorf("%s: no git directory found for the task's object directory", w.Repo)
	}
	if _, err := sandbox.ProvideObjects(common, string(w.TaskID)); err != nil {
		return fmt.Errorf("making %s's object directory: %w", w.TaskID, err)
	}
	return nil
}

// releaseObjects moves w's objects into the shared store and ends its
// object directory. Called once the removal is recorded: a failure (or a
// kill) leaves the directory listed, and Reconcile finishes it at start.
func (m *Manager) releaseObjects(w store.Worktree) {
	common := sandbox.CommonDir(w.Repo)
	if common == "" {
		return // the repository is gone, and its objects with it
	}
	moved, err := sandbox.ReleaseObjects(common, string(w.TaskID))
	if err != nil {
		m.log.Warn("task objects not released; finished at the next daemon start", "task_id", w.TaskID, "err", err)
		return
	}
	if len(moved.Corrupt) > 0 {
		m.log.Warn("task objects whose content did not match their name were dropped", "task_id", w.TaskID, "objects", moved.Corrupt)
	}
	m.log.Debug("task objects released", "task_id", w.TaskID, "moved", moved.Objects, "present", moved.Present, "packs", moved.Packs)
}

// recoverObjects finishes, in each repository of ws, what a daemon killed
// between provisioning and removal left of the task object directories:
// the objects of an active worktree's (a command killed with the daemon)
// are moved into the shared store and its line removed, no command of it
// running now; that of a removed one is released; a directory no record of
// this daemon names is left alone; an alternates line whose directory is
// gone is dropped.
func (m *Manager) recoverObjects(ctx context.Context, ws []store.Worktree) {
	byRepo := map[string]map[task.ID]store.Worktree{}
	for _, w := range ws {
		if byRepo[w.Repo] == nil {
			byRepo[w.Repo] = map[task.ID]store.Worktree{}
		}
		byRepo[w.Repo][w.TaskID] = w
	}
	for repo, known := range byRepo {
		common := sandbox.CommonDir(repo)
		if common == "" || ctx.Err() != nil {
			continue
		}
		ids, err := sandbox.ObjectDirs(common)
		if err != nil {
			m.log.Warn("listing task object directories", "repo", repo, "err", err)
			continue
		}
		for _, id := range ids {
			w, ok := known[task.ID(id)]
			if !ok {
				continue
			}
			func() {
				defer m.lockTask(w.TaskID)()
				if w.State == store.WorktreeActive {
					moved, err := sandbox.DetachObjects(common, id)
					if err != nil {
						m.log.Warn("the objects a task left were not moved into the shared store", "task_id", w.TaskID, "err", err)
						return
					}
					if moved.Objects > 0 || len(moved.Corrupt) > 0 {
						m.log.Info("moved the objects a task's command left into the shared store", "task_id", w.TaskID, "moved", moved.Objects, "dropped", moved.Corrupt)
					}
					return
				}
				m.log.Info("finishing the release of a removed worktree's objects", "task_id", w.TaskID)
				m.releaseObjects(w)
			}()
		}
		if err := sandbox.DropStaleAlternates(common); err != nil {
			m.log.Warn("dropping stale alternates", "repo", repo, "err", err)
		}
	}
}
