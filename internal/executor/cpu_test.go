//go:build unix

package executor

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, so
// benchmarks can report cost apart from time spent waiting for a CPU on a
// loaded machine.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
