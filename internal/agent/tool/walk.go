package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// errStop ends a walk early without an error.
var errStop = errors.New("stop walking")

// walk visits the files (anything but a directory) at or under base, a path
// relative to the working directory, in lexical order, giving each its real
// absolute path and a slash-separated path relative to the working
// directory. That path starts with base as written when base is a plain
// relative path (so a symlinked directory inside keeps its name), and is the
// real one otherwise. walk skips .git and the directories descend refuses, and
// does not follow symlinks below base: they are visited as files. visit may
// return errStop to end the walk. A base that does not exist has no files.
func walk(ctx context.Context, env *Env, base string, descend func(rel string) bool, visit func(abs, rel string, d fs.DirEntry) error) error {
	root, err := workDir(env)
	if err != nil {
		return err
	}
	abs, realRel, err := resolveIn(root, env.Dir, base)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	prefix := realRel
	if clean := path.Clean(filepath.ToSlash(base)); !filepath.IsAbs(base) && clean != ".." && !strings.HasPrefix(clean, "../") {
		prefix = clean
	}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == abs {
				return err
			}
			return nil // an unreadable entry below the base: skip it
		}
		if d.Name() == ".git" && p != abs {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		below, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		rel := path.Join(prefix, filepath.ToSlash(below))
		if d.IsDir() {
			if p != abs && !descend(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		return visit(p, rel, d)
	})
	switch {
	case err == nil || errors.Is(err, errStop):
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("stopped: %w", ctx.Err())
	default:
		return err
	}
}
