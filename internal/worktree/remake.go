package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// A daemon killed during `git worktree add` (git dies with it) leaves the
// worktree registered, locked "initializing" — the lock git takes before it
// checks anything out and drops when the checkout is done — and its files
// half written. No task can have run in it: the daemon refuses a locked
// worktree. Such a worktree is removed and made again (remake). Whatever
// is in its directory that is not the checkout of its branch (a file not in
// the commit, or with other content) is copied first to the task's
// ignored-files archive and brought back once the worktree is made again
// (never over a file the checkout wrote; then it stays in the archive): a
// remake loses nothing anyone wrote.

// errHalfMade says a worktree's creation was interrupted.
var errHalfMade = errors.New("its creation was interrupted (git's worktree lock says initializing)")

// halfMade reports whether git's lock on the worktree at path is the one
// `git worktree add` holds while it creates it.
func halfMade(path string) bool {
	b, err := os.ReadFile(filepath.Join(path, ".git"))
	if err != nil {
		return false
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return false
	}
	reason, err := os.ReadFile(filepath.Join(admin, "locked"))
	return err == nil && strings.TrimSpace(string(reason)) == "initializing"
}

// remake removes w's half-made worktree, keeping what was not checked out,
// and makes it again from its branch (or base commit), finishing the
// creation: the task's record, worktree.created, the bootstrap.
func (m *Manager) remake(ctx context.Context, w store.Worktree) (store.Worktree, error) {
	start := m.now()
	from, err := m.ensureBranch(ctx, w)
	if err != nil {
		return w, err
	}
	extra, err := notCheckedOut(ctx, w, from)
	if err != nil {
		return w, fmt.Errorf("checking %s's half-made worktree before making it again: %w", w.TaskID, err)
	}
	var keptIn string
	if len(extra) > 0 {
		if keptIn, err = m.archiveIgnored(ctx, w, extra); err != nil {
			return w, err
		}
	}
	err = git.Locked(ctx, w.Repo, func(ctx context.Context) error {
		if _, err := git.Run(ctx, w.Repo, "worktree", "unlock", w.Path); err != nil {
			return err
		}
		_, err := git.Run(ctx, w.Repo, "worktree", "remove", "--force", w.Path)
		return err
	})
	if err != nil {
		return w, fmt.Errorf("removing %s's half-made worktree: %w", w.TaskID, err)
	}
	if err := m.add(ctx, w, from); err != nil {
		return w, err
	}
	if len(extra) > 0 {
		if _, err := m.restoreIgnored(ctx, w); err != nil {
			m.log.Warn("files of a half-made worktree not all brought back", "task_id", w.TaskID, "err", err)
		}
	}
	m.emit(ctx, w.TaskID, event.WorktreeRemade{Path: w.Path, Branch: w.Branch, Kept: extra, KeptIn: keptIn})
	m.log.Warn("worktree left half made by a killed daemon made again", "task_id", w.TaskID, "path", w.Path, "kept", len(extra))
	return m.finishCreate(ctx, w, start)
}

// notCheckedOut lists the files in w's directory (slash-separated, relative)
// that are not the checkout of commit: not in it, or with other content.
func notCheckedOut(ctx context.Context, w store.Worktree, commit string) ([]string, error) {
	out, err := git.Run(ctx, w.Repo, "ls-tree", "-r", "-z", commit)
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			blobs[path] = f[2]
		}
	}
	var extra, check []string
	err = filepath.WalkDir(w.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Path, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch _, known := blobs[rel]; {
		case !known:
			extra = append(extra, rel)
		case d.Type().IsRegular():
			check = append(check, rel)
		}
		return nil
	})
	if err != nil || len(check) == 0 {
		return extra, err
	}
	paths := make([]string, len(check))
	for i, rel := range check {
		paths[i] = filepath.Join(w.Path, filepath.FromSlash(rel))
	}
	sums, err := git.RunStdin(ctx, w.Repo, strings.Join(paths, "\n")+"\n", "hash-object", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	got := strings.Fields(sums)
	if len(got) != len(check) {
		return nil, fmt.Errorf("git hash-object gave %d sums for %d files", len(got), len(check))
	}
	for i, rel := range check {
		if got[i] != blobs[rel] {
			extra = append(extra, rel)
		}
	}
	return extra, nil
}
