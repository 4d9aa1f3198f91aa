package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Per-task object directories.
//
// A task's git writes its objects in a directory of its own,
// <common>/neuraphage/objects/<id> (GIT_OBJECT_DIRECTORY, set by
// [Launcher.Wrap], with GIT_ALTERNATE_OBJECT_DIRECTORIES naming the shared
// object store, so everything stays readable); the shared store, loose
// objects included, is read-only to the task. While one of the task's
// commands runs its directory is listed in the shared store's
// info/alternates, so every other git process (the daemon's on the task's
// branch, the user's `git log --all`, `git gc`, `git fsck`) finds the
// objects its branch points at; when it ends they are moved into the
// shared store and the line removed (calls.go). Before the directory goes,
// what is left is moved too ([ReleaseObjects]).

// objectsHome is where the task object directories are, under the common
// git directory.
const objectsHome = "neuraphage/objects"

// altPrefix starts the shared store's alternates lines naming a task's
// object directory, relative to the shared store (<common>/objects).
const altPrefix = "../" + objectsHome + "/"

// ObjectDir returns the object directory of task id in the repository whose
// common git directory is common.
func ObjectDir(common, id string) string {
	return filepath.Join(common, filepath.FromSlash(objectsHome), id)
}

// validID reports whether id can name a directory of its own.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\n\r") && !strings.HasPrefix(id, ".")
}

// ProvideObjects makes task id's object directory in the repository whose
// common git directory is common, when missing. It is listed in the shared
// store's info/alternates only while a command of the task runs
// ([Launcher.Wrap]). It can be called again: what exists is kept.
func ProvideObjects(common, id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("task id %q cannot name an object directory", id)
	}
	dir := ObjectDir(common, id)
	// The directory alone: its commands reach the shared store through
	// GIT_ALTERNATE_OBJECT_DIRECTORIES (withObjects), not an alternates
	// file of its own, which every git of the repository would open and
	// resolve once per task (see BenchmarkGitWithAlternates).
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("making the task's object directory: %w", err)
	}
	return dir, nil
}

// Moved is what ReleaseObjects did.
type Moved struct {
	// Objects counts the loose objects moved into the shared store;
	// Present those it held already.
	Objects, Present int
	// Packs counts the packs moved.
	Packs int
	// Corrupt lists the loose objects whose content does not match their
	// name: never moved; SettleObjects removes them, ReleaseObjects drops
	// them with the directory.
	Corrupt []string
}

// ReleaseObjects ends task id's object directory: its objects are moved into
// the shared store (each copied, checked against its name, and synced),
// then its line is removed from the shared store's alternates, then the
// directory is deleted, in that order, so that an interruption between any
// two steps loses no object and a second call finishes the job. A missing directory
// only has its line removed.
func ReleaseObjects(common, id string) (Moved, error) {
	if !validID(id) {
		return Moved{}, fmt.Errorf("task id %q cannot name an object directory", id)
	}
	dir := ObjectDir(common, id)
	var m Moved
	if _, err := os.Lstat(dir); err == nil {
		if m, err = MigrateObjects(dir, filepath.Join(common, "objects")); err != nil {
			return m, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	if err := editAlternates(common, true, unlist(id)); err != nil {
		return m, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return m, fmt.Errorf("removing the task's object directory: %w", err)
	}
	forget(dir)
	return m, nil
}

// ObjectDirs returns the ids of the task object directories of the
// repository whose common git directory is common.
func ObjectDirs(common string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(common, filepath.FromSlash(objectsHome)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// DropStaleAlternates removes from the shared store's alternates the lines
// of task object directories that no longer exist (git reports an error
// for each in every command otherwise); the user's own lines are kept.
func DropStaleAlternates(common string) error {
	return editAlternates(common, true, func(lines []string) []string {
		return slices.DeleteFunc(lines, func(l string) bool {
			id, ok := strings.CutPrefix(l, altPrefix)
			if !ok {
				return false
			}
			_, err := os.Stat(ObjectDir(common, id))
			return errors.Is(err, fs.ErrNotExist)
		})
	})
}

// editAlternates rewrites the shared store's info/alternates with edit's
// lines, under a lock (provisions and removals run concurrently, in this
// process and another). The file is replaced whole (written beside,
// synced, renamed), so a git reading it meanwhile sees the old lines or the
// new ones. Edits asked for at once in this process are applied together,
// in one rewrite: each rewrite waits for the disk, the lines do not. A
// rewrite is synced when one of its edits is durable; the others (the
// lines of running commands, which a restart drops) are not worth a disk
// flush.
func editAlternates(common string, durable bool, edit func([]string) []string) error {
	r := &altEdit{edit: edit, durable: durable, done: make(chan error, 1)}
	altBatches.mu.Lock()
	b := altBatches.by[common]
	if b == nil {
		b = &altBatch{}
		altBatches.by[common] = b
	}
	b.queue = append(b.queue, r)
	altBatches.mu.Unlock()

	b.writer.Lock()
	altBatches.mu.Lock()
	q := b.queue
	b.queue = nil
	altBatches.mu.Unlock()
	if len(q) > 0 {
		err := rewriteAlternates(common, q)
		for _, e := range q {
			e.done <- err
		}
	}
	b.writer.Unlock()
	// Applied by this call, or by the one that held the writer before.
	return <-r.done
}

// altEdit is one edit of a repository's alternates waiting to be written.
type altEdit struct {
	edit    func([]string) []string
	durable bool
	done    chan error
}

// altBatch is a repository's edits waiting, and the writer's turn.
type altBatch struct {
	writer sync.Mutex
	queue  []*altEdit // under altBatches.mu
}

// altBatches holds the waiting edits of each repository (by common git
// directory) of this process.
var altBatches = struct {
	mu sync.Mutex
	by map[string]*altBatch
}{by: map[string]*altBatch{}}

// rewriteAlternates applies edits, in order, to the shared store's
// alternates under the repository's lock, and writes them once.
func rewriteAlternates(common string, edits []*altEdit) error {
	lock, err := lockObjects(common)
	if err != nil {
		return err
	}
	defer lock()
	path := filepath.Join(common, "objects", "info", "alternates")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the repository's alternates: %w", err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	out := slices.Clone(lines)
	durable := false
	for _, e := range edits {
		out = e.edit(out)
		durable = durable || e.durable
	}
	if slices.Equal(out, lines) {
		return nil
	}
	var nb bytes.Buffer
	for _, l := range out {
		nb.WriteString(l + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := writeFileSynced(path, nb.Bytes(), durable); err != nil {
		return fmt.Errorf("writing the repository's alternates: %w", err)
	}
	return nil
}

// lockObjects takes the lock of the task object directories' bookkeeping
// in the repository, for this process and others; it returns the unlock.
// The file stays; the lock (flock) goes with the process holding it, so a
// killed daemon leaves nothing to clean up (and the name does not end in
// .lock, which git's own lock files do).
func lockObjects(common string) (func(), error) {
	home := filepath.Join(common, filepath.FromSlash(objectsHome))
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("making the task object directories' home: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(home, ".flock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the alternates lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the alternates: %w", err)
	}
	return func() { f.Close() }, nil
}

// writeFileSynced replaces path with b: written beside it, synced, renamed
// over it, and the directory synced; without durable, only renamed (a
// reader sees the old content or the new, a crash may keep the old).
func writeFileSynced(path string, b []byte, durable bool) error {
	tmp := path + ".tmp"
	if !durable {
		return replaceQuick(path, tmp, b)
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir syncs a directory's entries.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
