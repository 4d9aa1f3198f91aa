package worktree

import "time"

// SetUsersGrace sets how long ClearStaleLocks waits for the processes using
// a repository to go, and returns what puts it back.
func SetUsersGrace(d time.Duration) func() {
	old := usersGrace
	usersGrace = d
	return func() { usersGrace = old }
}
