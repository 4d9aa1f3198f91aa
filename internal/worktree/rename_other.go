//go:build !linux

package worktree

import "errors"

// renameAtomic is false where no atomic no-replace rename is used: the
// worktrees are made by git's own add there.
const renameAtomic = false

func renameNoReplace(old, new string) error {
	return errors.New("no atomic no-replace rename on this platform")
}
