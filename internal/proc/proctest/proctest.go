// Package proctest helps tests check that the processes a command started
// are gone.
//
// A process killed after its parent exited is reparented to init (or to the
// nearest subreaper) and stays a zombie until that process reaps it, and a
// zombie still counts as a member of its process group. Where init does not
// reap promptly (some containers and micro-VMs), "the group is gone" can only
// be checked if the test process reaps the orphans itself: Subreaper makes it
// their parent on Linux.
package proctest

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// GroupGone waits until no process of group pgid exists. pids are the
// group's members the test knows of (besides the leader, which the runner
// reaped); if they became the test's children (see Subreaper) GroupGone
// reaps them first. It fails the test if the group still exists after bound,
// a safety net of many seconds, not a timing assertion.
func GroupGone(t testing.TB, pgid int, pids []int, bound time.Duration) {
	t.Helper()
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for _, pid := range pids {
			var ws syscall.WaitStatus
			// Blocks until pid exits; ECHILD at once when it is not ours.
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-reaped:
	case <-timer.C:
		t.Fatalf("processes %v of group %d still running after %v", pids, pgid, bound)
	}
	// Where init reaps the orphans (no subreaper), that happens on its own
	// schedule: look again until the bound.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		select {
		case <-tick.C:
		case <-timer.C:
			t.Fatalf("process group %d still exists after %v (kill -0: %v)", pgid, bound, err)
		}
	}
}
