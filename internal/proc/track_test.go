//go:build linux

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc/proctest"
)

const bound = 60 * time.Second

func newTestTracker(t *testing.T) *Tracker {
	t.Helper()
	tr, err := NewTracker(filepath.Join(t.TempDir(), "procs"), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// gone says whether pid no longer names a running process.
func gone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.State == "Z"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, bound)
		}
		time.Sleep(pollEvery)
	}
}

// startOrphanLike starts sh -c script in its own group, as the dead daemon
// did, with env added; the test reaps it.
func startOrphanLike(t *testing.T, script string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "4242 (we(ird) name) S 1 4240 4200 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615"
	st, err := parseStat(4242, line)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{PID: 4242, PPID: 1, PGID: 4240, SID: 4200, Start: 987654, State: "S", Comm: "we(ird) name"}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
	if _, err := parseStat(1, "1 (init"); err == nil {
		t.Error("a stat line without its fields parsed")
	}
}

// A command left by a dead daemon: found by its token, stopped, reported,
// its record removed.
func TestStopLeftoversByToken(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(t)
	rec := Record{Owner: "task-1", Token: "deadbeef", Command: "sleep 1000", Boot: tr.boot, After: tr.self.Start}
	if err := tr.write(rec); err != nil {
		t.Fatal(err)
	}
	// Not the group's leader, and in a session of its own: found by the
	// token alone.
	cmd := startOrphanLike(t, "exec setsid sleep 1000", EnvToken+"=deadbeef")
	var pid int
	deadline := time.Now().Add(bound)
	for pid == 0 {
		if time.Now().After(deadline) {
			t.Fatal("setsid's sleep never appeared")
		}
		all, _ := listProcesses()
		for _, p := range all {
			if p.Comm == "sleep" && p.PID != cmd.Process.Pid && hasEnv(p.PID, EnvToken+"=deadbeef") {
				pid = p.PID
			}
		}
		time.Sleep(pollEvery)
	}
	stopped, err := tr.StopLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 1 || stopped[0].Owner != "task-1" || len(stopped[0].Processes) != 1 || stopped[0].Processes[0].PID != pid ||
		!strings.Contains(stopped[0].Processes[0].Command, "sleep 1000") || len(stopped[0].Survivors) != 0 {
		t.Fatalf("stopped %+v, want task-1's sleep %d", stopped, pid)
	}
	waitGone(t, pid)
	if f := files(t, tr.dir); len(f) != 0 {
		t.Errorf("records left: %v", f)
	}
}

// A group recorded with its leader's start time: the leader and its
// background job are stopped, though neither carries a token.
func TestStopLeftoversByGroup(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(t)
	cmd := startOrphanLike(t, "sleep 1000 & echo $! >"+filepath.Join(t.TempDir(), "pid")+"; wait")
	st, err := readStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{Owner: "task-2", Token: "cafe", Command: "sleep", Boot: tr.boot, After: tr.self.Start, PGID: cmd.Process.Pid, Start: st.Start}
	if err := tr.write(rec); err != nil {
		t.Fatal(err)
	}
	var members []procStat
	deadline := time.Now().Add(bound)
	for len(members) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("group %d has %v, want the shell and its sleep", cmd.Process.Pid, members)
		}
		all, _ := listProcesses()
		members = tr.members(rec, all)
		time.Sleep(pollEvery)
	}
	stopped, err := tr.StopLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 1 || len(stopped[0].Processes) != 2 {
		t.Fatalf("stopped %+v, want the group's 2 processes", stopped)
	}
	for _, p := range members {
		waitGone(t, p.PID)
	}
}

// A recorded group whose leader's pid names a process started at another
// time is someone else's: nothing is signalled.
func TestStopLeftoversSparesARecycledPID(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(t)
	cmd := startOrphanLike(t, "sleep 1000 & wait")
	st, err := readStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []Record{
		{Owner: "task-3", Token: "aa", Boot: tr.boot, After: tr.self.Start, PGID: cmd.Process.Pid, Start: st.Start - 1},
		{Owner: "task-3", Token: "bb", Boot: "another boot", After: 0, PGID: cmd.Process.Pid, Start: st.Start},
	} {
		if err := tr.write(rec); err != nil {
			t.Fatal(err)
		}
	}
	stopped, err := tr.StopLeftovers()
	if err != nil || len(stopped) != 0 {
		t.Fatalf("stopped %+v (%v), want nothing", stopped, err)
	}
	if gone(cmd.Process.Pid) {
		t.Fatal("the unrelated group was killed")
	}
	if f := files(t, tr.dir); len(f) != 0 {
		t.Errorf("records left: %v", f)
	}
}

// A tracked command: a process it moved out of its group with setsid is
// killed when the call ends, reported in Escaped, and the record goes.
func TestRunKillsEscapedProcesses(t *testing.T) {
	proctest.Subreaper(t)
	tr := newTestTracker(t)
	ctx := WithOwner(context.Background(), tr, "task-4")
	// The shell waits until the new session's process has written its pid,
	// so the group is killed after it left.
	script := `setsid sh -c 'echo $$ >"$0"; exec sleep 1000' "$F" >/dev/null 2>&1 &
while [ ! -s "$F" ]; do sleep 0.01; done
cat "$F"; echo "$` + EnvToken + `"`
	res, err := Run(ctx, Cmd{Shell: script, Env: append(os.Environ(), "F="+filepath.Join(t.TempDir(), "pid")), Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(res.Output)
	if len(lines) != 2 || len(lines[1]) != 32 {
		t.Fatalf("output %q, want a pid and the token", res.Output)
	}
	pid, _ := strconv.Atoi(lines[0])
	waitGone(t, pid)
	if len(res.Escaped) != 1 || res.Escaped[0].PID != pid {
		t.Errorf("Escaped %+v, want the setsid'd sleep %d", res.Escaped, pid)
	}
	if f := files(t, tr.dir); len(f) != 0 {
		t.Errorf("records left: %v", f)
	}
	// Reaped by the tracker: it was our child (the subreaper's), not
	// os/exec's.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		t.Logf("self %+v stat %s", tr.self, st)
		t.Errorf("kill -0 %d: %v, want ESRCH (reaped)", pid, err)
	}
}

// StopOwner ends a task's command that is still running: its Run returns.
func TestStopOwnerStopsARunningCommand(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(t)
	ctx := WithOwner(context.Background(), tr, "task-5")
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Cmd{Shell: "echo started; exec sleep 1000"})
		done <- res
	}()
	deadline := time.Now().Add(bound)
	for {
		recs, _ := tr.records(func(r Record) bool { return r.Owner == "task-5" && r.PGID != 0 })
		if len(recs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command was never recorded")
		}
		time.Sleep(pollEvery)
	}
	if other, _ := tr.StopOwner("task-6"); len(other) != 0 {
		t.Fatalf("another owner's stop stopped %+v", other)
	}
	stopped, err := tr.StopOwner("task-5")
	if err != nil || len(stopped) != 1 {
		t.Fatalf("stopped %+v (%v), want the sleep", stopped, err)
	}
	select {
	case res := <-done:
		if res.ExitCode != 128+int(syscall.SIGTERM) {
			t.Errorf("exit %d, want SIGTERM's", res.ExitCode)
		}
	case <-time.After(bound):
		t.Fatal("Run did not return after StopOwner")
	}
}

// Which children may be reaped without taking a status from os/exec.
func TestReapable(t *testing.T) {
	t.Parallel()
	tr := &Tracker{self: procStat{PID: 100, PGID: 90, SID: 80}}
	for _, tt := range []struct {
		name string
		p    procStat
		want bool
	}{
		{"os/exec child leading its group", procStat{PID: 200, PPID: 100, PGID: 200, SID: 80}, false},
		{"child started without Setpgid", procStat{PID: 201, PPID: 100, PGID: 90, SID: 80}, false},
		{"orphaned member of a command's group", procStat{PID: 202, PPID: 100, PGID: 200, SID: 80}, true},
		{"orphan in a session of its own", procStat{PID: 203, PPID: 100, PGID: 203, SID: 203}, true},
		{"zombie session leader (sid shown as 0)", procStat{PID: 204, PPID: 100, PGID: 204, SID: 0}, true},
		{"not our child", procStat{PID: 205, PPID: 1, PGID: 200, SID: 203}, false},
	} {
		if got := tr.reapable(tt.p); got != tt.want {
			t.Errorf("%s: reapable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// An orphan that left its command's session and exited is reaped by Reap,
// the daemon being its subreaper.
func TestReapCollectsAdoptedOrphans(t *testing.T) {
	proctest.Subreaper(t)
	tr := newTestTracker(t)
	// The subshell exits at once, orphaning the setsid'd shell, which
	// writes its pid and exits when told: a zombie of ours.
	f := filepath.Join(t.TempDir(), "pid")
	script := `(setsid sh -c 'echo $$ >"$F.tmp"; mv "$F.tmp" "$F"; while [ ! -e "$F.go" ]; do sleep 0.01; done' >/dev/null 2>&1 &)
while [ ! -s "$F" ]; do sleep 0.01; done
cat "$F"`
	res, err := Run(context.Background(), Cmd{Shell: script, Env: append(os.Environ(), "F="+f)})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	if err := os.WriteFile(f+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(bound)
	for {
		tr.Reap()
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			t.Fatalf("orphan %d not reaped: %s", pid, st)
		}
		time.Sleep(pollEvery)
	}
}

// The cost of tracking a command: run `true` with and without a Tracker.
func BenchmarkRun(b *testing.B) {
	tr, err := NewTracker(filepath.Join(b.TempDir(), "procs"), 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name string
		ctx  context.Context
	}{
		{"untracked", context.Background()},
		{"tracked", WithOwner(context.Background(), tr, "task-b")},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(bb.ctx, Cmd{Args: []string{"true"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
