package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// tracking says whether this system can find processes again: /proc is
// there and shows start times.
func tracking() bool {
	_, err := readStat(os.Getpid())
	return err == nil
}

// setSubreaper makes the calling process the parent of the orphans of its
// descendants (PR_SET_CHILD_SUBREAPER).
func setSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// bootID names the current boot: start times count from it.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readStat reads /proc/<pid>/stat. The command name may hold spaces and
// parentheses: the fields after it start after the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, string(b))
}

func parseStat(pid int, s string) (procStat, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state); field n is f[n-3]. Field 22 is the start
	// time in clock ticks after boot.
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	st := procStat{PID: pid, Comm: s[open+1 : end], State: f[0]}
	var errs [4]error
	st.PPID, errs[0] = strconv.Atoi(f[1])
	st.PGID, errs[1] = strconv.Atoi(f[2])
	st.SID, errs[2] = strconv.Atoi(f[3])
	st.Start, errs[3] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// listProcesses reads the stat of every process; those that vanish while
// it reads are skipped.
func listProcesses() ([]procStat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// hasEnv says whether process pid was started with the variable kv
// ("NAME=value") in its environment. An environment that cannot be read (a
// zombie, another user's process) says no.
func hasEnv(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for v := range bytes.SplitSeq(b, []byte{0}) {
		if string(v) == kv {
			return true
		}
	}
	return false
}

// cmdline is a process's command line, its arguments joined by spaces, or
// its command name when that cannot be read.
func cmdline(p procStat) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
	if err != nil || len(b) == 0 {
		return p.Comm
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// reap collects pid's exit status if it has exited, without waiting.
// It reports whether pid is gone (reaped now, or not our child).
func reap(pid int) bool {
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return got == pid || errors.Is(err, syscall.ECHILD)
}
