package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// DefaultIgnoredSkip is the build output that is not kept when a worktree
// is removed: a pattern ending in "/" names a directory anywhere in the
// tree, any other is matched against file names (and whole paths).
var DefaultIgnoredSkip = []string{"node_modules/", "target/", "dist/", ".cache/", "__pycache__/", "*.pyc"}

// stateDir is where Neuraphage keeps a repository's worktree state beside
// its archive refs: <git-common-dir>/neuraphage.
func stateDir(ctx context.Context, repo string) (string, error) {
	d, err := git.GitDirs(ctx, repo)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.Common, "neuraphage"), nil
}

// IgnoredArchive returns the directory that keeps the ignored files of task
// id's removed worktree: <git-common-dir>/neuraphage/ignored/<task-id>.
func IgnoredArchive(ctx context.Context, repo string, id task.ID) (string, error) {
	d, err := stateDir(ctx, repo)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ignored", string(id)), nil
}

func manifestPath(ctx context.Context, repo string, id task.ID) (string, error) {
	d, err := stateDir(ctx, repo)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "provisioned", string(id)+".json"), nil
}

// fileSum is what provisioning put at one path.
type fileSum struct {
	Size int64  `json:"size"`
	Sum  string `json:"sha256"`
}

// skipped reports whether rel (slash-separated; a directory ends in "/")
// is build output by the patterns.
func skipped(rel string, patterns []string) bool {
	isDir := strings.HasSuffix(rel, "/")
	parts := strings.Split(strings.TrimSuffix(rel, "/"), "/")
	for _, p := range patterns {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			// A directory pattern matches any directory on the path.
			dirs := parts[:len(parts)-1]
			if isDir {
				dirs = parts
			}
			for _, d := range dirs {
				if ok, _ := path.Match(dir, d); ok {
					return true
				}
			}
			continue
		}
		if isDir {
			continue
		}
		if ok, _ := path.Match(p, parts[len(parts)-1]); ok {
			return true
		}
		if ok, _ := path.Match(p, strings.TrimSuffix(rel, "/")); ok {
			return true
		}
	}
	return false
}

func (m *Manager) skipPatterns() []string {
	if m.cfg.IgnoredSkip != nil {
		return m.cfg.IgnoredSkip
	}
	return DefaultIgnoredSkip
}

// ignoredFiles returns every ignored file in the worktree at dir that is
// not build output, relative and slash-separated, sorted. Ignored
// directories are walked; symbolic links are files.
func (m *Manager) ignoredFiles(ctx context.Context, dir string) ([]string, error) {
	names, err := git.IgnoredFiles(ctx, dir)
	if err != nil {
		return nil, err
	}
	skip := m.skipPatterns()
	var out []string
	for _, n := range names {
		if skipped(n, skip) {
			continue
		}
		if !strings.HasSuffix(n, "/") {
			out = append(out, n)
			continue
		}
		root := filepath.Join(dir, filepath.FromSlash(n))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if p != root && skipped(rel+"/", skip) {
					return filepath.SkipDir
				}
				return nil
			}
			if !skipped(rel, skip) {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// sum returns the size and SHA-256 of a file (of a symbolic link's target
// text).
func sum(p string) (fileSum, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileSum{}, err
	}
	h := sha256.New()
	if fi.Mode()&fs.ModeSymlink != 0 {
		l, err := os.Readlink(p)
		if err != nil {
			return fileSum{}, err
		}
		h.Write([]byte("link:" + l))
	} else {
		f, err := os.Open(p)
		if err != nil {
			return fileSum{}, err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return fileSum{}, err
		}
	}
	return fileSum{Size: fi.Size(), Sum: hex.EncodeToString(h.Sum(nil))}, nil
}

// recordProvisioned writes down the ignored files provisioning put in w's
// worktree (bootstrap copies, setup output), so that removal keeps only
// what was created or changed after. Without this record every ignored
// file is kept.
func (m *Manager) recordProvisioned(ctx context.Context, w store.Worktree) error {
	files, err := m.ignoredFiles(ctx, w.Path)
	if err != nil {
		return err
	}
	man := map[string]fileSum{}
	for _, f := range files {
		s, err := sum(filepath.Join(w.Path, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		man[f] = s
	}
	p, err := manifestPath(ctx, w.Repo, w.TaskID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(man)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func (m *Manager) provisioned(ctx context.Context, w store.Worktree) map[string]fileSum {
	p, err := manifestPath(ctx, w.Repo, w.TaskID)
	if err != nil {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var man map[string]fileSum
	if json.Unmarshal(data, &man) != nil {
		return nil
	}
	return man
}

// keptIgnored returns the ignored files of w's worktree that removing it
// would keep: created or changed since it was provisioned, and not build
// output.
func (m *Manager) keptIgnored(ctx context.Context, w store.Worktree) ([]string, error) {
	files, err := m.ignoredFiles(ctx, w.Path)
	if err != nil {
		return nil, err
	}
	man := m.provisioned(ctx, w)
	var out []string
	for _, f := range files {
		if was, ok := man[f]; ok {
			p := filepath.Join(w.Path, filepath.FromSlash(f))
			// Hashed only when the size still matches: listing stays cheap.
			if fi, err := os.Lstat(p); err == nil && fi.Size() == was.Size {
				if now, err := sum(p); err == nil && now == was {
					continue
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// archiveIgnored copies files (relative to w's worktree) into the task's
// ignored-files archive, replacing older copies there, and returns the
// archive. Removing the worktree afterwards deletes the originals; an
// error here means nothing may be removed.
func (m *Manager) archiveIgnored(ctx context.Context, w store.Worktree, files []string) (string, error) {
	dir, err := IgnoredArchive(ctx, w.Repo, w.TaskID)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		src := filepath.Join(w.Path, filepath.FromSlash(f))
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return dir, fmt.Errorf("keeping ignored file %s in %s: %w", f, dir, err)
		}
		if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dir, fmt.Errorf("keeping ignored file %s in %s: %w", f, dir, err)
		}
		if err := copyTree(src, dst); err != nil {
			return dir, fmt.Errorf("keeping ignored file %s in %s: %w", f, dir, err)
		}
		if err := syncFile(dst); err != nil {
			return dir, fmt.Errorf("keeping ignored file %s in %s: %w", f, dir, err)
		}
	}
	return dir, nil
}

func syncFile(p string) error {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// restoreIgnored brings the task's archived ignored files back into its
// worktree, never over a file that is there, then drops the archive. It
// returns the files brought back.
func (m *Manager) restoreIgnored(ctx context.Context, w store.Worktree) ([]string, error) {
	dir, err := IgnoredArchive(ctx, w.Repo, w.TaskID)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var back []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		back = append(back, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var taken []string
	for _, f := range back {
		if _, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(f))); err == nil {
			taken = append(taken, f)
		}
	}
	if err := copyTree(dir, w.Path); err != nil {
		return nil, fmt.Errorf("bringing back the ignored files kept in %s: %w (they are still there)", dir, err)
	}
	if len(taken) > 0 {
		// Never over a file in the worktree, and never dropped unrestored.
		return back, fmt.Errorf("%s already in %s; the archived copies stay in %s", strings.Join(taken, ", "), w.Path, dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		m.log.Warn("ignored-files archive left after restore", "dir", dir, "err", err)
	}
	return back, nil
}
