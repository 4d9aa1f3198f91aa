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
	dirsMu.Lock()
	if len(dirsCache) >= dirsCacheMax {
		clear(dirsCache)
	}
	dirsCache[dir] = d
	dirsMu.Unlock()
	return d, nil
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
		if errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "work tree") {
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
