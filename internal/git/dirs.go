package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Dirs are the git directories of a work tree: facts that do not change
// while it exists, asked of git once and then kept.
type Dirs struct {
	// Common is the git directory shared by all the repository's work
	// trees; Own is this work tree's (the same for the main work tree).
	Common, Own string
	bare        bool
}

// The directories of every directory asked about, kept while its own git
// directory exists: a work tree removed and made again at the same place
// is asked again when its administrative directory changed.
var (
	dirsMu    sync.Mutex
	dirsCache = map[string]Dirs{}
)

// dirsCacheMax bounds the cache: work trees come and go.
const dirsCacheMax = 1 << 14

// GitDirs returns the git directories of the work tree (or git directory)
// dir is in, asking git only the first time. A directory outside any
// repository is ErrNotRepo.
func GitDirs(ctx context.Context, dir string) (Dirs, error) {
	return locate(ctx, dir)
}

func locate(ctx context.Context, dir string) (Dirs, error) {
	if d, ok := linkedDirs(dir); ok {
		return d, nil // read afresh each time: a few small files
	}
	dirsMu.Lock()
	d, ok := dirsCache[dir]
	dirsMu.Unlock()
	if ok {
		if _, err := os.Stat(d.Own); err == nil {
			return d, nil
		}
	}
	out, err := runOnce(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--is-bare-repository", "--git-common-dir", "--git-dir")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.ExitCode == 128 && strings.Contains(gerr.Stderr, "not a git repository") {
			return Dirs{}, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return Dirs{}, err
	}
	f := strings.Split(strings.TrimSpace(out), "\n")
	if len(f) < 3 {
		return Dirs{}, fmt.Errorf("git rev-parse in %s: unexpected output %q", dir, out)
	}
	d = Dirs{Common: filepath.Clean(f[1]), Own: filepath.Clean(f[2]), bare: f[0] == "true"}
	remember(dir, d)
	return d, nil
}

func remember(dir string, d Dirs) {
	dirsMu.Lock()
	if len(dirsCache) >= dirsCacheMax {
		clear(dirsCache)
	}
	dirsCache[dir] = d
	dirsMu.Unlock()
}

// linkedDirs reads the git directories of the linked worktree whose top is
// dir from its files, as git finds them: <dir>/.git says "gitdir: <own>",
// and <own>/commondir names the common directory (relative to <own>). ok
// is false for anything else (a main work tree, a subdirectory, git
// directories redirected through the environment): git is asked then.
func linkedDirs(dir string) (Dirs, bool) {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_COMMON_DIR") != "" || !filepath.IsAbs(dir) {
		return Dirs{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return Dirs{}, false
	}
	own, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || own == "" {
		return Dirs{}, false
	}
	if !filepath.IsAbs(own) {
		own = filepath.Join(dir, own)
	}
	c, err := os.ReadFile(filepath.Join(own, "commondir"))
	if err != nil {
		return Dirs{}, false
	}
	common := strings.TrimSpace(string(c))
	if common == "" {
		return Dirs{}, false
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(own, common)
	}
	if _, err := os.Stat(filepath.Join(common, "HEAD")); err != nil {
		return Dirs{}, false
	}
	// git reports the physical paths.
	if own, err = filepath.EvalSymlinks(own); err != nil {
		return Dirs{}, false
	}
	if common, err = filepath.EvalSymlinks(common); err != nil {
		return Dirs{}, false
	}
	return Dirs{Common: filepath.Clean(common), Own: filepath.Clean(own)}, true
}

// The tops of the work trees asked about, kept like dirsCache.
var topCache = map[string]string{}

// workTreeTop returns the top of the work tree dir is in (d its
// directories), asking git only the first time.
func workTreeTop(ctx context.Context, dir string, d Dirs) (string, error) {
	dirsMu.Lock()
	top, ok := topCache[dir+"\x00"+d.Own]
	dirsMu.Unlock()
	if ok {
		return top, nil
	}
	out, err := runOnce(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && (strings.Contains(gerr.Stderr, "work tree") || strings.Contains(gerr.Stderr, "not a git repository")) {
			return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return "", err
	}
	top = filepath.Clean(strings.TrimSpace(out))
	if top == "." || top == "" {
		return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	dirsMu.Lock()
	if len(topCache) >= dirsCacheMax {
		clear(topCache)
	}
	topCache[dir+"\x00"+d.Own] = top
	dirsMu.Unlock()
	return top, nil
}

// headBranch returns the branch HEAD of the work tree with git directory
// own names, read from its HEAD file; ok is false when the file does not
// say (a detached HEAD, another ref backend): then git is asked.
func headBranch(own string) (branch string, ok bool) {
	b, err := os.ReadFile(filepath.Join(own, "HEAD"))
	if err != nil {
		return "", false
	}
	name, found := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !found || name == "" || name == ".invalid" {
		return "", false
	}
	return name, true
}
