package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symlinks followed while resolving one path, as the
// kernel's ELOOP does.
const maxLinks = 40

// resolve turns a path the model gave into the real absolute path it names
// and that path relative to the working directory (slash-separated, "." for
// the directory itself), or refuses it with an error the model can read.
//
// A relative path is taken from env.Dir. Every symlink on the way is
// followed, including one that is the last component and points nowhere yet
// (writing through it would create its target), and ".." is applied after the
// symlink before it, as the kernel does. The result must lie inside the real
// working directory: a path that leaves it by "..", by being absolute
// elsewhere or through a symlink is refused. The returned path contains no
// symlinks, so opening it cannot be redirected (short of a concurrent change
// to the tree, which this guard-rail does not defend against).
func resolve(env *Env, path string) (abs, rel string, err error) {
	root, err := workDir(env)
	if err != nil {
		return "", "", err
	}
	return resolveIn(root, env.Dir, path)
}

// workDir returns the working directory with its symlinks resolved (/tmp on
// macOS is one).
func workDir(env *Env) (string, error) {
	if env.Dir == "" {
		return "", errors.New("no working directory is set")
	}
	root, err := filepath.EvalSymlinks(env.Dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s is unavailable: %w", env.Dir, err)
	}
	return root, nil
}

// resolveIn is resolve with the real working directory root already known;
// dir is the working directory as configured, for messages.
func resolveIn(root, dir, path string) (abs, rel string, err error) {
	if path == "" {
		return "", "", errors.New("the path is empty; give a path relative to the working directory")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", "", fmt.Errorf("path %q contains a NUL byte", path)
	}
	start := root
	if filepath.IsAbs(path) {
		start = "/"
	}
	real, err := follow(start, path)
	if err != nil {
		return "", "", fmt.Errorf("resolving path %q: %w", path, err)
	}
	r, err := filepath.Rel(root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", "", outside(dir, root, path, real)
	}
	return real, filepath.ToSlash(r), nil
}

// outside explains why path is refused.
func outside(dir, root, path, real string) error {
	lexical := filepath.Clean(path)
	if !filepath.IsAbs(path) {
		lexical = filepath.Join(root, path)
	}
	if within(root, lexical) || within(filepath.Clean(dir), lexical) {
		return fmt.Errorf("path %q goes through a symlink to %s, outside the working directory %s; only files inside it may be used", path, real, dir)
	}
	return fmt.Errorf("path %q is outside the working directory %s; use a path inside it (relative paths are taken from it)", path, dir)
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// follow walks path component by component from the real directory start,
// following symlinks. Components that do not exist are appended as they are.
// Every component is looked at, even below a missing one: "missing/../link"
// must still follow link.
func follow(start, path string) (string, error) {
	cur := start
	rest := path
	links := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, string(filepath.Separator))
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			cur = next
			continue
		case err != nil:
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		// Resolve the link's target in place of the component, then go on.
		if rest == "" {
			rest = target
		} else {
			rest = target + string(filepath.Separator) + rest
		}
	}
	return cur, nil
}
