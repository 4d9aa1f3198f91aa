//go:build !linux

package proc

import "runtime"

// Lower gives the calling goroutine a thread of its own for the rest of its
// life; only Linux lowers the priority of one thread (elsewhere it would be
// the whole daemon's), so here the priority stays as it is.
func Lower(n int) error {
	runtime.LockOSThread()
	return nil
}
