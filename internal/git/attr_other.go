//go:build !linux

package git

import "syscall"

// sysProcAttr puts git in its own process group (killed whole on
// cancellation).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
