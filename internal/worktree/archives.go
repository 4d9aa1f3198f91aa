package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// ArchivePruneResult is what PruneArchives did with one task's
// ignored-files archive.
type ArchivePruneResult struct {
	TaskID task.ID `json:"task_id"`
	// Dir is the archive; Files counts the files it held.
	Dir     string `json:"dir"`
	Files   int    `json:"files"`
	Removed bool   `json:"removed"`
	Reason  string `json:"reason"`
}

// PruneArchives deletes ignored-files archives (IgnoredArchive) that are no
// longer needed, and reports every archive it finds, deleted or kept, with
// why:
//
//   - the task's worktree was restored and every archived file is in it as
//     archived (a restore that met a file in the way keeps the archive;
//     an archived copy that differs from the worktree's is kept);
//   - with olderThan > 0, the archive of a worktree removed longer ago than
//     that (an archive no worktree record names: its directory's age).
//
// Everything else is kept. The branch archive refs are not touched: they
// cost nothing and restoring needs them.
func (m *Manager) PruneArchives(ctx context.Context, olderThan time.Duration) ([]ArchivePruneResult, error) {
	ws, err := m.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	var repos []string
	for _, w := range ws {
		if !slices.Contains(repos, w.Repo) {
			repos = append(repos, w.Repo)
		}
	}
	var out []ArchivePruneResult
	for _, repo := range repos {
		if _, err := os.Stat(repo); err != nil {
			continue // the repository is gone, and its archives with it
		}
		sd, err := stateDir(ctx, repo)
		if err != nil {
			return out, err
		}
		ents, err := os.ReadDir(filepath.Join(sd, "ignored"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		for _, ent := range ents {
			if !ent.IsDir() {
				continue
			}
			id := task.ID(ent.Name())
			var w *store.Worktree
			for i := range ws {
				if ws[i].TaskID == id && ws[i].Repo == repo {
					w = &ws[i]
				}
			}
			res, err := m.pruneArchive(ctx, filepath.Join(sd, "ignored", ent.Name()), id, w, olderThan)
			if err != nil {
				return out, err
			}
			out = append(out, res)
		}
	}
	return out, nil
}

func (m *Manager) pruneArchive(ctx context.Context, dir string, id task.ID, w *store.Worktree, olderThan time.Duration) (ArchivePruneResult, error) {
	defer m.lockTask(id)()
	res := ArchivePruneResult{TaskID: id, Dir: dir}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Files = len(files)
	if w != nil {
		// Re-read under the task's lock: a restore may just have run.
		if cur, err := m.st.GetWorktree(ctx, id); err == nil {
			w = &cur
		}
	}
	var since time.Time
	switch {
	case w != nil && w.State == store.WorktreeActive:
		var differ []string
		for _, f := range files {
			a, aerr := sum(filepath.Join(dir, filepath.FromSlash(f)))
			b, berr := sum(filepath.Join(w.Path, filepath.FromSlash(f)))
			if aerr != nil || berr != nil || a != b {
				differ = append(differ, f)
			}
		}
		if len(differ) > 0 {
			res.Reason = fmt.Sprintf("its worktree was restored, but %d archived file(s) differ from or are missing in %s (%s): compare them, then delete %s yourself",
				len(differ), w.Path, strings.Join(differ, ", "), dir)
			return res, nil
		}
		res.Reason = "its worktree was restored and holds every archived file as archived"
	default:
		if w != nil {
			since = w.UpdatedAt
		} else if fi, err := os.Stat(dir); err == nil {
			since = fi.ModTime()
		}
		age := m.now().Sub(since).Truncate(time.Minute)
		if olderThan <= 0 || age < olderThan {
			res.Reason = fmt.Sprintf("archived %s ago; kept (--older-than removes older archives)", age)
			if olderThan > 0 {
				res.Reason = fmt.Sprintf("archived %s ago, within %s; kept", age, olderThan)
			}
			return res, nil
		}
		res.Reason = fmt.Sprintf("archived %s ago, more than %s", age, olderThan)
	}
	if err := os.RemoveAll(dir); err != nil {
		return res, fmt.Errorf("deleting the archive %s: %w", dir, err)
	}
	res.Removed = true
	m.log.Info("ignored-files archive deleted", "task_id", id, "dir", dir, "files", res.Files, "reason", res.Reason)
	return res, nil
}
