package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A task's object directory is listed in the shared store's alternates only
// while one of its commands runs; every git of the repository looks at each
// listed directory once (about 20 µs), so idle tasks must cost nothing.
// When a command ends its new objects are moved into the shared store
// (SettleObjects) and, when it was the task's last running command, its
// line is removed: between commands, the shared store holds everything the
// task's branch points at, and its directory is empty.

// running counts, per task object directory, the commands of this process
// running with it listed. Each entry's lock is held across its count's
// change and the alternates edit it causes, so a command starting while
// the last one ends never runs with its line removed.
var running = struct {
	mu sync.Mutex
	by map[string]*runCount
}{by: map[string]*runCount{}}

type runCount struct {
	mu sync.Mutex
	n  int
}

func runCountOf(own string) *runCount {
	running.mu.Lock()
	defer running.mu.Unlock()
	r := running.by[own]
	if r == nil {
		r = &runCount{}
		running.by[own] = r
	}
	return r
}

// splitOwn returns the common git directory and task id of the task object
// directory own (<common>/neuraphage/objects/<id>).
func splitOwn(own string) (common, id string, err error) {
	id = filepath.Base(own)
	common = filepath.Dir(filepath.Dir(filepath.Dir(own)))
	if !validID(id) || ObjectDir(common, id) != filepath.Clean(own) {
		return "", "", fmt.Errorf("%s is not a task object directory", own)
	}
	return common, id, nil
}

// BeginObjects lists the task object directory own in the shared store's
// alternates for a command of its task about to start (when no other of
// its commands runs already). Every BeginObjects that succeeded is
// followed by one EndObjects.
func BeginObjects(own string) error {
	common, id, err := splitOwn(own)
	if err != nil {
		return err
	}
	r := runCountOf(own)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		if err := editAlternates(common, false, func(lines []string) []string {
			if slices.Contains(lines, altPrefix+id) {
				return lines
			}
			return append(lines, altPrefix+id)
		}); err != nil {
			return err
		}
	}
	r.n++
	return nil
}

// EndObjects ends what BeginObjects began: the directory's objects are
// moved into the shared store (SettleObjects), then, when no other command
// of the task runs, its line is removed from the alternates. On an error
// the line stays (git still finds the objects); the next command's end, the
// worktree's removal or the daemon's next start finishes the job.
func EndObjects(own string) (Moved, error) {
	common, id, err := splitOwn(own)
	if err != nil {
		return Moved{}, err
	}
	r := runCountOf(own)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 0 {
		r.n--
	}
	m, err := SettleObjects(own)
	if err != nil || r.n > 0 {
		return m, err
	}
	return m, editAlternates(common, false, unlist(id))
}

// SettleObjects moves the loose objects of the task object directory own
// into the shared store beside it and removes them from own, once the
// shared store holds them durably (one file system sync, skipped when
// there was nothing to move). A loose object whose content does not match
// its name is removed unmoved, and reported. It may run while the task's
// commands run (a long-lived agent's turn end): what they write meanwhile
// is moved at the next call. Packs are moved and kept.
//
// Only the loose directories that may have changed since the last call are
// read (a stat each, where reading one costs ten times more): one is
// skipped when its change time (ctime, which adding or removing a file
// sets, and which no one can set back, unlike the modification time) is
// what the last call saw and older than that call's start by more than a
// second, as git's index does for its "racily clean" files. A file added
// since sets it to a time no older than the last call's start, whatever
// the clock's granularity. A call of a new process reads every directory.
func SettleObjects(own string) (Moved, error) {
	common, _, err := splitOwn(own)
	if err != nil {
		return Moved{}, err
	}
	st := scanOf(own)
	st.mu.Lock()
	defer st.mu.Unlock()
	start := time.Now().UnixNano()
	var seen [256]int64
	fans := make([]string, 0, 256)
	for i := range seen {
		fan := hexByte(i)
		fi, err := os.Lstat(filepath.Join(own, fan))
		if errors.Is(err, fs.ErrNotExist) {
			seen[i] = -1
			continue
		}
		if err != nil {
			return Moved{}, err
		}
		seen[i] = changeTime(fi)
		if st.at != 0 && seen[i] > 0 && seen[i] == st.ctime[i] && seen[i] < st.at-int64(racyWindow) {
			continue
		}
		fans = append(fans, fan)
	}
	m, done, err := migrate(own, filepath.Join(common, "objects"), fans)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil // released meanwhile
	}
	if err != nil {
		return m, err
	}
	for _, p := range done {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("removing a moved object from the task's directory: %w", err)
		}
	}
	st.at, st.ctime = start, seen
	return m, nil
}

// racyWindow is how much older than the last call's start a loose
// directory's change time must be for SettleObjects to trust it.
const racyWindow = time.Second

// scans holds, per task object directory, what SettleObjects last saw.
var scans = struct {
	mu sync.Mutex
	by map[string]*scanState
}{by: map[string]*scanState{}}

type scanState struct {
	mu    sync.Mutex
	at    int64      // when the last call started (Unix ns); 0: never
	ctime [256]int64 // each loose directory's change time then
}

func scanOf(own string) *scanState {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	s := scans.by[own]
	if s == nil {
		s = &scanState{}
		scans.by[own] = s
	}
	return s
}

// forget drops what this process remembers of own.
func forget(own string) {
	scans.mu.Lock()
	delete(scans.by, own)
	scans.mu.Unlock()
	running.mu.Lock()
	if r := running.by[own]; r != nil && r.n == 0 {
		delete(running.by, own)
	}
	running.mu.Unlock()
}

// hexByte is the loose directory name of i: "00" … "ff".
func hexByte(i int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[i>>4], digits[i&15]})
}

// DetachObjects settles task id's object directory and removes its line
// from the shared store's alternates: what the daemon's start does for
// each active task, no command of which runs then.
func DetachObjects(common, id string) (Moved, error) {
	if !validID(id) {
		return Moved{}, fmt.Errorf("task id %q cannot name an object directory", id)
	}
	m, err := SettleObjects(ObjectDir(common, id))
	if err != nil {
		return m, err
	}
	return m, editAlternates(common, true, unlist(id))
}

// unlist is the alternates edit that removes task id's line.
func unlist(id string) func([]string) []string {
	return func(lines []string) []string {
		return slices.DeleteFunc(lines, func(l string) bool { return l == altPrefix+id })
	}
}
