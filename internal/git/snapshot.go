package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Snapshot is the state of the changed files of a work tree under one
// directory: every path git status lists (modified, staged, deleted,
// untracked) with its size and modification time, so that Diff can tell
// which files a command in between touched. Files git lists as clean are not
// in it, except that Retake records the paths of the snapshot it starts from.
type Snapshot struct {
	// Dir is the directory the snapshot covers.
	Dir string
	// Taken is when the snapshot was started.
	Taken time.Time
	// Files maps slash-separated paths relative to Dir to their state.
	Files map[string]FileState
}

// FileState is one path of a Snapshot.
type FileState struct {
	// Status is the two-letter code of git status --porcelain ("??", " M",
	// "D ", ...), "" for a path git listed clean (recorded by Retake).
	Status string
	// Exists says a file (or symlink) is on disk at the path; the rest is
	// zero when it is not.
	Exists bool
	// Mode, Size, ModTime (nanoseconds since the Unix epoch) and Inode
	// are from lstat: a symlink is described, not followed.
	Mode    fs.FileMode
	Size    int64
	ModTime int64
	Inode   uint64
	// Sum is the SHA-256 of the content of a regular file modified so
	// recently that a second change could keep its size and time (the
	// file system clock is coarse), or of a file the previous snapshot
	// summed; otherwise empty.
	Sum string
}

const (
	// racyWindow: a file modified this close to the snapshot (or after it)
	// gets a content sum. File times come from a clock that ticks in
	// milliseconds; a second is ample.
	racyWindow = time.Second
	// maxSum: larger files are compared by size, time and inode only.
	maxSum = 8 << 20
)

// TakeSnapshot records the state of the work tree under dir from
// `git status --porcelain=v1 -z --untracked-files=all`. It returns an error
// wrapping ErrNotRepo when dir is not inside a git work tree.
func TakeSnapshot(ctx context.Context, dir string) (Snapshot, error) {
	return snapshot(ctx, dir, nil)
}

// Retake takes a new snapshot of s.Dir that also records every path of s
// (even those git now lists clean), so that Diff(s, next) can tell a file
// that was committed or left alone from one that was deleted or reverted.
func (s Snapshot) Retake(ctx context.Context) (Snapshot, error) {
	return snapshot(ctx, s.Dir, s.Files)
}

func snapshot(ctx context.Context, dir string, prev map[string]FileState) (Snapshot, error) {
	taken := time.Now()
	prefix, err := workTreePrefix(ctx, dir)
	if err != nil {
		return Snapshot{}, fmt.Errorf("taking a snapshot of %s: %w", dir, err)
	}
	out, err := Run(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".")
	if err != nil {
		return Snapshot{}, fmt.Errorf("taking a snapshot of %s: %w", dir, err)
	}
	s := Snapshot{Dir: dir, Taken: taken, Files: map[string]FileState{}}
	for _, entry := range strings.Split(out, "\x00") {
		if len(entry) < 4 || entry[2] != ' ' {
			continue // the empty field after the last NUL
		}
		rel, ok := strings.CutPrefix(entry[3:], prefix)
		if !ok {
			continue
		}
		status := entry[:2]
		if old, dup := s.Files[rel]; dup {
			// git rm --cached lists a path twice ("D " and "??").
			status = old.Status + "," + status
		}
		s.Files[rel] = FileState{Status: status}
	}
	for rel := range prev {
		if _, ok := s.Files[rel]; !ok {
			s.Files[rel] = FileState{}
		}
	}
	for rel, st := range s.Files {
		old, hadOld := prev[rel]
		if err := st.stat(filepath.Join(dir, filepath.FromSlash(rel)), taken, hadOld && old.Sum != ""); err != nil {
			return Snapshot{}, fmt.Errorf("taking a snapshot of %s: %w", dir, err)
		}
		s.Files[rel] = st
	}
	return s, nil
}

// stat fills in the state of the file at path. It sums the content of a
// regular file that is racy (see racyWindow) or when sum is set.
func (st *FileState) stat(path string, taken time.Time, sum bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	st.Exists = true
	st.Mode = fi.Mode()
	st.Size = fi.Size()
	st.ModTime = fi.ModTime().UnixNano()
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Inode = uint64(sys.Ino)
	}
	racy := !fi.ModTime().Before(taken.Add(-racyWindow))
	if !fi.Mode().IsRegular() || fi.Size() > maxSum || !(racy || sum) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			*st = FileState{Status: st.Status}
			return nil
		}
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	st.Sum = hex.EncodeToString(h.Sum(nil))
	return nil
}

// ChangeOp is what happened to a file between two snapshots.
type ChangeOp string

// Change operations.
const (
	Created  ChangeOp = "created"
	Modified ChangeOp = "modified"
	Deleted  ChangeOp = "deleted"
)

// Change is one file whose content changed between two snapshots, by its
// slash-separated path relative to the snapshots' Dir.
type Change struct {
	Path string
	Op   ChangeOp
}

// Diff returns the files whose content changed from before to after, sorted
// by path. after should come from before.Retake; for a path that before
// lists and a snapshot taken otherwise does not, Diff can only guess from the
// old status (an untracked file deleted, a modified one reverted). Changes to
// the index alone (git add, git commit) are not changes.
func Diff(before, after Snapshot) []Change {
	var changes []Change
	for rel, a := range after.Files {
		b, ok := before.Files[rel]
		if !ok {
			// Clean (or absent, or ignored) before, listed now.
			switch {
			case !a.Exists:
				if !strings.HasPrefix(a.Status, "A") {
					changes = append(changes, Change{rel, Deleted})
				}
			case a.Status == "??" || strings.HasPrefix(a.Status, "A"):
				changes = append(changes, Change{rel, Created})
			case strings.Contains(a.Status, "??"):
				// git rm --cached of a clean file: listed twice, not touched.
			default:
				changes = append(changes, Change{rel, Modified})
			}
			continue
		}
		if op, changed := compare(b, a); changed {
			changes = append(changes, Change{rel, op})
		}
	}
	for rel, b := range before.Files {
		if _, ok := after.Files[rel]; ok {
			continue
		}
		switch {
		case !b.Exists:
			changes = append(changes, Change{rel, Created})
		case b.Status == "??":
			changes = append(changes, Change{rel, Deleted})
		default:
			changes = append(changes, Change{rel, Modified})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

func compare(b, a FileState) (ChangeOp, bool) {
	switch {
	case !b.Exists && !a.Exists:
		return "", false
	case !b.Exists:
		return Created, true
	case !a.Exists:
		return Deleted, true
	case b.Mode != a.Mode || b.Size != a.Size || b.ModTime != a.ModTime || b.Inode != a.Inode:
		return Modified, true
	case b.Sum != "" && a.Sum != "" && b.Sum != a.Sum:
		return Modified, true
	}
	return "", false
}
