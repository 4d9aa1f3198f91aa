package proc

import (
	"runtime"
	"syscall"
)

// Lower gives the calling goroutine a thread of its own for the rest of its
// life, at a CPU priority lowered by n (nice, at most 19), and so every
// process it starts from now on: the kernel gives a lowered thread the cores
// that others leave free. It is for housekeeping a busy machine can put off
// (the cleanup of landed worktrees). The thread is never handed back (no
// runtime.UnlockOSThread), so it ends with the goroutine and no other work
// ever runs at the lowered priority. A refusal leaves the priority as it was.
func Lower(n int) error {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	// The raw system call answers 20 - nice.
	nice := 20 - raw
	return syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(nice+n, 19))
}
