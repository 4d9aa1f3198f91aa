package proc

import "syscall"

// sysProcAttr puts the child in its own process group and has the kernel
// kill it if the daemon dies (kill -9 included), so a command does not run
// on unseen after a crash. Pdeathsig reaches the child only, not processes
// it started in the background; those are the group's, which Run kills in
// every other case. After a crash, a Tracker finds them (WithOwner).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
