package worktree

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// bootstrap copies the configured files into a new worktree and runs its
// setup command. A failure keeps the worktree, records itself (so a daemon
// that dies here also tries again) and is retried by the next Provision;
// copying again is safe, as it never overwrites.
func (m *Manager) bootstrap(ctx context.Context, w *store.Worktree) error {
	if m.cfg.Bootstrap == nil {
		return nil
	}
	b := m.cfg.Bootstrap(w.Repo)
	if len(b.Copy) == 0 && strings.TrimSpace(b.Setup) == "" {
		return nil
	}
	release, err := m.slot(ctx) // Config.Parallel at once, with the checkouts
	if err != nil {
		return err
	}
	defer release()
	if w.Note == "" && strings.TrimSpace(b.Setup) != "" {
		// Recorded before the setup runs: a kill during it is retried.
		m.setNote(ctx, w, setupFailed+"interrupted (the daemon stopped while it ran)")
	}
	note := ""
	if err := copyIgnored(ctx, w.Repo, w.Path, b.Copy); err != nil {
		note = fmt.Sprintf("%scopying bootstrap files into %s: %v", setupFailed, w.Path, err)
	}
	timeout := cmp.Or(b.SetupTimeout, 10*time.Minute)
	var res proc.Result
	if note == "" && strings.TrimSpace(b.Setup) != "" {
		c := proc.Cmd{
			Dir: w.Path, Shell: b.Setup, Timeout: timeout, MaxOutput: 8 << 10,
			// The daemon's environment without its keys, tokens and own
			// variables: the setup runs the repository's scripts.
			Env: append(proc.WithoutSecrets(os.Environ()), m.Env(*w)...),
		}
		// Confined as the task's commands are, its objects in the task's
		// own directory.
		if err = m.provideObjects(*w); err == nil && m.cfg.Confine != nil {
			c, err = m.cfg.Confine(ctx, c, *w)
		}
		if err == nil {
			res, err = proc.Run(ctx, c)
		}
	}
	if rerr := m.recordProvisioned(ctx, *w); rerr != nil {
		// Without the record every ignored file is kept at removal: safe.
		m.log.Warn("recording the provisioned files", "task_id", w.TaskID, "err", rerr)
	}
	switch {
	case note != "":
	case err != nil:
		note = setupFailed + err.Error()
	case res.TimedOut:
		note = fmt.Sprintf("%s%q timed out after %s", setupFailed, b.Setup, timeout)
	case res.ExitCode != 0:
		note = fmt.Sprintf("%s%q exited with %d: %s", setupFailed, b.Setup, res.ExitCode, words.Tail(res.Output, 400))
	}
	if note != w.Note {
		w.Note = note
		w.UpdatedAt = m.now().UTC()
		if _, err := m.st.PutWorktree(ctx, *w); err != nil {
			return err
		}
	}
	if note != "" {
		return fmt.Errorf("%s: the worktree is kept at %s and setup runs again when the task resumes", note, w.Path)
	}
	return nil
}

// copyIgnored copies the git-ignored files matching patterns from the main
// work tree into a new worktree, never over a file that is already there.
// Directories are copied whole. A match git does not ignore is skipped: a
// tracked file is in the checkout already, and the user's untracked files
// are theirs (copied, they would be committed as the task's work).
func copyIgnored(ctx context.Context, from, to string, patterns []string) error {
	for _, p := range patterns {
		matches, err := filepath.Glob(filepath.Join(from, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("pattern %q: %w", p, err)
		}
		for _, src := range matches {
			rel, err := filepath.Rel(from, src)
			if err != nil || rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) || strings.HasPrefix(rel, "..") {
				continue
			}
			if ignored, err := git.IsIgnored(ctx, from, rel); err != nil {
				return err
			} else if !ignored {
				continue
			}
			if err := copyTree(src, filepath.Join(to, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyTree copies a file, symlink or directory without overwriting.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if _, err := os.Lstat(target); err == nil {
			if d.IsDir() {
				return nil // merge into the existing directory, file by file
			}
			return nil // never overwrite
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return copyFile(path, target, info.Mode().Perm())
		}
		return nil // sockets, devices: not copied
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
