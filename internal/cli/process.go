package cli

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processAlive reports whether a process with this pid exists and has not
// exited. A daemon the CLI started is reparented when the CLI exits; until its
// new parent reaps it, an exited daemon lingers as a zombie, which signal 0
// still finds, so on Linux the process state is read too.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: trust the signal
	}
	// The state follows the parenthesized command name: "pid (comm) S ...".
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}
