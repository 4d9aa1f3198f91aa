package sandbox

import (
	"os"

	"syscall"

	"golang.org/x/sys/unix"
)

// syncMoved makes durable the files and directories a migration placed
// under dir: one syncfs of dir's file system, which flushes every file and
// directory entry at once (a sync per object costs a disk flush each).
func syncMoved(dir string, _, _ []string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}

// replaceQuick replaces path with b, unsynced: written in a new file tmp,
// then exchanged with path (renameat2 RENAME_EXCHANGE) and the old content
// removed. A reader sees the old content or the new. Renaming over path
// instead would make ext4 write the new file out first (its
// replace-by-rename heuristic), a disk flush that costs ten times the rest
// on a busy machine.
func replaceQuick(path, tmp string, b []byte) error {
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if err == nil {
		return os.Remove(tmp) // the old content
	}
	// No path yet, or a file system without exchange.
	return os.Rename(tmp, path)
}

// changeTime is fi's inode change time (ctime), Unix ns.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return fi.ModTime().UnixNano()
}
