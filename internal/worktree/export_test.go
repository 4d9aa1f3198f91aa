package worktree

import (
	"context"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// SetUsersGrace sets how long ClearStaleLocks waits for the processes using
// a repository to go, and returns what puts it back.
func SetUsersGrace(d time.Duration) func() {
	old := usersGrace
	usersGrace = d
	return func() { usersGrace = old }
}

// StopFastAddAt makes m's fast worktree creation stop at step ("branch",
// "admin", "dotgit", "registered") as a kill there would: nothing after
// it done, nothing undone.
func (m *Manager) StopFastAddAt(step string) {
	m.stop = func(s string) bool { return s == step }
}

// AfterKeptRound makes fn run after each round of copies of the ignored
// files a removal keeps, as a process still writing in the worktree would.
func (m *Manager) AfterKeptRound(fn func(round int)) { m.keptRound = fn }

// ErrStopped is what a creation stopped by StopFastAddAt returns.
var ErrStopped = errStopped

// RemoveLinked removes w's worktree as `git worktree remove` would, without
// the checks Remove makes first.
func (m *Manager) RemoveLinked(ctx context.Context, w store.Worktree) error {
	return m.removeLinked(ctx, w)
}
