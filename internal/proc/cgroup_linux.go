package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A cgroup v2 subtree the daemon may write (a delegated one: systemd's
// Delegate=yes, a container's own cgroup) holds each command in a cgroup of
// its own, under one per task: <daemon's cgroup>/neuraphage-<task>/<token>.
// Nothing a command starts can leave it, and cgroup.kill kills all of it at
// once. Where there is none (cgroup v1, an undelegated tree) the process
// group, start time and token of the record find the processes instead.

// findCgroup returns the daemon's own cgroup v2 directory when commands'
// cgroups can be made in it, else "".
func findCgroup() string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	mount, rel := cgroup2Mount(string(mi)), unifiedPath(string(cg))
	if mount == "" || rel == "" {
		return ""
	}
	dir := filepath.Join(mount, rel)
	if !usableCgroup(dir) {
		return ""
	}
	return dir
}

// usableCgroup says whether dir is a cgroup v2 directory with cgroup.kill
// (Linux 5.14) where this process may make cgroups and move processes.
func usableCgroup(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return false
	}
	const wOK = 2
	return syscall.Access(dir, wOK) == nil && syscall.Access(filepath.Join(dir, "cgroup.procs"), wOK) == nil
}

// cgroup2Mount finds the mount point of the cgroup2 file system in
// /proc/self/mountinfo, or "".
func cgroup2Mount(mountinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		// "36 35 98:0 /root /mnt/point rw,opts shared:1 - cgroup2 cgroup2 rw"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" && f[3] == "/" {
			return unescapeMount(f[4])
		}
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unifiedPath finds this process's cgroup in the unified hierarchy
// ("0::/path" in /proc/self/cgroup), or "".
func unifiedPath(cgroup string) string {
	for line := range strings.SplitSeq(cgroup, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return p
		}
	}
	return ""
}

// makeCgroup makes the cgroup of one command of owner under root and opens
// it for clone's CLONE_INTO_CGROUP.
func makeCgroup(root, owner, token string) (string, *os.File, error) {
	dir := filepath.Join(root, "neuraphage-"+safeName(owner), token)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("making the command's cgroup: %w", err)
	}
	f, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return "", nil, fmt.Errorf("opening the command's cgroup: %w", err)
	}
	return dir, f, nil
}

// probeCgroup starts a process in a cgroup made under root, to learn
// whether commands can start in cgroups there (clone3 with
// CLONE_INTO_CGROUP, Linux 5.7, and no controller forbidding it).
func probeCgroup(root string) error {
	dir, f, err := makeCgroup(root, "probe", strconv.Itoa(os.Getpid()))
	if err != nil {
		return err
	}
	defer removeCgroup(dir)
	defer f.Close()
	attr := &syscall.SysProcAttr{}
	intoCgroup(attr, f)
	p, err := os.StartProcess("/bin/sh", []string{"/bin/sh", "-c", ":"}, &os.ProcAttr{Sys: attr})
	if err != nil {
		return err
	}
	_, err = p.Wait()
	return err
}

// intoCgroup has the child start in the cgroup f is open on.
func intoCgroup(a *syscall.SysProcAttr, f *os.File) {
	a.UseCgroupFD = true
	a.CgroupFD = int(f.Fd())
}

// killCgroup kills every process in the cgroup dir and below.
func killCgroup(dir string) error {
	err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // already removed
	}
	return err
}

// cgroupPIDs lists the processes in the cgroup dir (not below it).
func cgroupPIDs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// removeCgroup removes a command's empty cgroup, and its task's when that
// is empty too.
func removeCgroup(dir string) {
	if os.Remove(dir) == nil {
		_ = os.Remove(filepath.Dir(dir)) // fails while other commands of the task run
	}
}

// safeName keeps a name usable as one path element.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '.' {
			return '_'
		}
		return r
	}, s)
}
