// Package spawn starts the daemon as a detached background process for the
// CLI's auto-start and `daemon start`, and opens the user's browser for
// `neuraphage web` (OpenURL). It is the only package besides git and proc that
// runs other programs.
package spawn

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Process is a detached child process.
type Process struct {
	cmd    *exec.Cmd
	exited bool
	status syscall.WaitStatus
}

// Detached starts the program exe with argv[0] set to argv0 (so a binary that
// dispatches on its name keeps working) and args, in a new session, with stdin
// from /dev/null and stdout and stderr appended to outFile. The child inherits
// the caller's environment except its secret variables (see [Secrets]; extra
// names more), which it gets through an inherited pipe named by SecretsFDEnv
// and reads with [HideSecrets], so they never appear in its
// /proc/<pid>/environ. It keeps running after the caller exits.
func Detached(exe, argv0 string, args []string, outFile string, extra []string) (*Process, error) {
	out, err := os.OpenFile(outFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s for the daemon's output: %w", outFile, err)
	}
	defer out.Close()
	env, held := Secrets(os.Environ(), extra)
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        append([]string{argv0}, args...),
		Env:         env,
		Stdout:      out,
		Stderr:      out,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if len(held) > 0 {
		r, err := handOver(held)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		cmd.ExtraFiles = []*os.File{r}
		cmd.Env = append(cmd.Env, SecretsFDEnv+"=3")
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return &Process{cmd: cmd}, nil
}

// PID returns the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports, without waiting, whether the child has exited, reaping it if
// so, and its exit code.
func (p *Process) Exited() (bool, int) {
	if p.exited {
		return true, p.status.ExitStatus()
	}
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(p.cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
	if err != nil || pid == 0 {
		return false, 0
	}
	p.exited, p.status = true, ws
	return true, ws.ExitStatus()
}
