package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// WorkTreeTree writes the tree of everything in the work tree at dir that
// git does not ignore, tracked or not, as it is on disk, and returns its
// id. The real index is not touched (a temporary one is used), nor are the
// files: this is a read-only photograph of the work tree, taken to predict
// a merge with it or to check that it came back unchanged.
func WorkTreeTree(ctx context.Context, dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "neuraphage-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	// Start from a copy of the real index, whose file stats spare hashing
	// the files that did not change; else from HEAD, else from nothing.
	if !copyIndex(ctx, dir, index) {
		if _, err := run(ctx, dir, env, "read-tree", "HEAD"); err != nil {
			if _, err := run(ctx, dir, env, "read-tree", "--empty"); err != nil {
				return "", err
			}
		}
	}
	if _, err := run(ctx, dir, env, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	out, err := run(ctx, dir, env, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// copyIndex copies the index of the work tree at dir to path.
func copyIndex(ctx context.Context, dir, path string) bool {
	out, err := run(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return false
	}
	src := strings.TrimSpace(out)
	info, err := os.Stat(src)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return false
	}
	if os.WriteFile(path, b, 0o600) != nil {
		return false
	}
	// Keep the index's time: git trusts a file's cached stat only when the
	// file is older than the index, and re-reads those changed in the
	// second the index was written ("racily clean"). A copy dated now would
	// make them look older and keep their old content.
	return os.Chtimes(path, info.ModTime(), info.ModTime()) == nil
}
