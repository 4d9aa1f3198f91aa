package tool

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The content sums of changed files: what a call left in each file it
// changed, so that the Watcher knows a rewrite of the same bytes, or a
// return to earlier content, from a real change, whichever tool made it (a
// shell command's changes come from git status, which sees a new mtime as
// a change). Kept cheap: at most MaxSummed files per call, each at most
// MaxSumSize bytes, regular files only (a symlink is not followed).
const (
	MaxSummed  = 64
	MaxSumSize = 1 << 20
)

// SumChanges returns the content sum of each changed file under dir, in
// the order of changes: "" for a deleted file, one that is not a regular
// file, is larger than MaxSumSize or cannot be read, and for the files
// past the first MaxSummed.
func SumChanges(dir string, changes []Change) []string {
	if len(changes) == 0 {
		return nil
	}
	out := make([]string, len(changes))
	for i, c := range changes {
		if i >= MaxSummed {
			break
		}
		if c.Op == Deleted || !filepath.IsLocal(filepath.FromSlash(c.Path)) {
			continue
		}
		out[i] = ContentSum(filepath.Join(dir, filepath.FromSlash(c.Path)))
	}
	return out
}

// ContentSum returns a regular file's size and the first 16 bytes of its
// SHA-256, as "SIZE:HEX", or "" when path is not a regular file of at most
// MaxSumSize bytes that can be read.
func ContentSum(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxSumSize {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxSumSize+1))
	if err != nil || n > MaxSumSize {
		return ""
	}
	return fmt.Sprintf("%d:%x", n, h.Sum(nil)[:16])
}
