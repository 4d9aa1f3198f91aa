package git

import "syscall"

// sysProcAttr puts git in its own process group (killed whole on
// cancellation) and has the kernel kill it when the daemon dies, kill -9
// included: a git left running after its daemon would go on changing a
// work tree (finishing a rebase once a hook lets it, say) while the next
// daemon rolls that same operation back.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
