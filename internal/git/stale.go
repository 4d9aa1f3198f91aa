package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A git killed half way (with the daemon that ran it, which is how git dies
// here: it carries the parent-death signal) leaves its lock files behind.
// Every later git that needs the same lock fails on it ("Unable to create
// '….lock': File exists") until someone removes the file. The functions
// below find such files and remove them safely; which ones may be removed
// is the caller's decision (internal/worktree knows which refs and
// directories are the daemon's own).

// LockFile is a lock file in a repository's git directory.
type LockFile struct {
	// Path is the file's absolute path; Rel the same relative to the
	// common git directory, with slashes ("packed-refs.lock",
	// "refs/heads/main.lock", "worktrees/t-abc/index.lock").
	Path, Rel string
	ModTime   time.Time
	ino, dev  uint64
}

// LockFiles lists the lock files git takes in the common git directory
// commonDir: at its top (packed-refs, index, HEAD, config), under refs/ and
// logs/, and in the administrative directories of its worktrees.
func LockFiles(commonDir string) ([]LockFile, error) {
	var out []LockFile
	err := filepath.WalkDir(commonDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		rel, _ := filepath.Rel(commonDir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// The top, refs and reflogs, worktrees' own directories: where
			// git takes locks a later command waits on. Not objects/, nor
			// what others keep in the git directory (neuraphage's archive
			// of ignored files may hold a user's yarn.lock).
			top, _, _ := strings.Cut(rel, "/")
			if rel != "." && top != "refs" && top != "logs" && top != "worktrees" {
				return filepath.SkipDir
			}
			return nil
		}
		// packed-refs.new is the file git writes the new packed-refs to
		// while it holds packed-refs.lock, created exclusively as well.
		if !strings.HasSuffix(d.Name(), ".lock") && rel != "packed-refs.new" || !d.Type().IsRegular() {
			return nil
		}
		l, err := statLock(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		l.Rel = rel
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the lock files in %s: %w", commonDir, err)
	}
	return out, nil
}

func statLock(p string) (LockFile, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return LockFile{}, err
	}
	l := LockFile{Path: p, ModTime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		l.ino, l.dev = uint64(st.Ino), uint64(st.Dev) //nolint:unconvert // the types differ by platform
	}
	return l, nil
}

// RemoveLock removes the lock file l if it is still the very file listed:
// git creates a lock file exclusively, so while that file exists no other
// git can have taken the lock, and a file of the same identity and time is
// still the one left by the git that made it.
func RemoveLock(l LockFile) error {
	cur, err := statLock(l.Path)
	if err != nil {
		return err
	}
	if cur.ino != l.ino || cur.dev != l.dev || !cur.ModTime.Equal(l.ModTime) {
		return fmt.Errorf("%s changed since it was found; left alone", l.Path)
	}
	return os.Remove(l.Path)
}

// RepoDirs returns the directories of the repository whose common git
// directory is commonDir and whose main work tree is main: both, and the
// work tree of every linked worktree git registers.
func RepoDirs(commonDir, main string) []string {
	dirs := []string{filepath.Clean(commonDir)}
	if main != "" {
		dirs = append(dirs, filepath.Clean(main))
	}
	ents, _ := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(commonDir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if p := strings.TrimSpace(string(b)); p != "" {
			dirs = append(dirs, filepath.Dir(filepath.Clean(p)))
		}
	}
	return dirs
}

// Proc is a live process using a repository.
type Proc struct {
	PID     int
	Command string
	// Why names the working directory or open file that ties it to the
	// repository.
	Why string
}

func (p Proc) String() string { return fmt.Sprintf("%d %s (%s)", p.PID, p.Command, p.Why) }

// ErrNoProcfs is returned when the machine's processes cannot be listed:
// nothing can then be proved about who holds a lock.
var ErrNoProcfs = errors.New("the processes on this machine cannot be listed (no /proc)")

// Users returns the live processes other than this one whose working
// directory is in one of dirs or that have a file under one of them open.
// It reads /proc; processes of other users cannot be read there and are
// not counted (they cannot write into a repository of this user's without
// its permission bits allowing it, which git's own lock files do not
// check either).
func Users(dirs []string) ([]Proc, error) {
	if runtime.GOOS != "linux" {
		return nil, ErrNoProcfs
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoProcfs, err)
	}
	self := os.Getpid()
	under := func(p string) bool {
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		base := filepath.Join("/proc", e.Name())
		cmd := ""
		if b, err := os.ReadFile(filepath.Join(base, "cmdline")); err == nil {
			cmd = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		}
		if cwd, err := os.Readlink(filepath.Join(base, "cwd")); err == nil && under(cwd) {
			out = append(out, Proc{PID: pid, Command: cmd, Why: "working directory " + cwd})
			continue
		}
		fds, err := os.ReadDir(filepath.Join(base, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			t, err := os.Readlink(filepath.Join(base, "fd", fd.Name()))
			if err == nil && under(strings.TrimSuffix(t, " (deleted)")) {
				out = append(out, Proc{PID: pid, Command: cmd, Why: "open file " + t})
				break
			}
		}
	}
	return out, nil
}
