package worktree

import "golang.org/x/sys/unix"

// renameAtomic says renameNoReplace is one atomic step that never
// replaces what exists.
const renameAtomic = true

// renameNoReplace renames old to new, failing when new exists (even an
// empty directory, which rename(2) would replace).
func renameNoReplace(old, new string) error {
	return unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
}
