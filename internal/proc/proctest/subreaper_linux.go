package proctest

import (
	"syscall"
	"testing"
)

const prSetChildSubreaper = 36

// Subreaper makes the test process the parent of orphans of its descendants
// (Linux PR_SET_CHILD_SUBREAPER), so GroupGone can reap them. It lasts for the
// rest of the test binary's life; orphans of other tests then stay zombies
// of the test process until it exits, which is harmless.
func Subreaper(t testing.TB) {
	t.Helper()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}
