package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// clockTicks is Linux's USER_HZ, the unit of the CPU times in
// /proc/PID/stat: 100 on every architecture Go supports.
const clockTicks = 100

// loadCPU is the CPU time the daemon spent from the tasks' release until
// they had all finished, which the wall time of a loaded machine does not
// inflate: its own threads (the agent loops, checkpoints, events,
// provisioning and landing as the daemon runs them, the HTTP API the
// sampler polls), and apart from it the git processes it waited for. The
// scripted model server and this command are other processes.
type loadCPU struct {
	DaemonSeconds float64 `json:"daemon_seconds"`
	// PerCallMs is the daemon's CPU per model call: DaemonSeconds divided
	// by tasks × turns. With the model's latency out of it, this is the
	// orchestration's cost of a call, whatever the load.
	PerCallMs    float64 `json:"per_call_ms"`
	GitSeconds   float64 `json:"git_seconds"`
	GitPerTaskMs float64 `json:"git_per_task_ms"`
	// ResolutionMs is the kernel's unit of CPU time (a clock tick).
	ResolutionMs float64 `json:"resolution_ms"`
}

// cpuSample is a process's CPU time in clock ticks: its own (user and
// system, all threads) and its waited-for children's.
type cpuSample struct{ self, children int64 }

// readCPU reads a process's CPU times from /proc/PID/stat.
func readCPU(pid int) (cpuSample, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return cpuSample{}, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	return parseProcStat(string(b))
}

// parseProcStat takes utime, stime, cutime and cstime (fields 14 to 17)
// from a /proc/PID/stat line. The command name (field 2) is in
// parentheses and may hold spaces and parentheses itself: the fields are
// counted from after its last ')'.
func parseProcStat(s string) (cpuSample, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return cpuSample{}, fmt.Errorf("no command name in %q", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 15 {
		return cpuSample{}, fmt.Errorf("%d fields after the command name, want 15 or more", len(f))
	}
	var v [4]int64
	for k := range v {
		n, err := strconv.ParseInt(f[11+k], 10, 64)
		if err != nil || n < 0 {
			return cpuSample{}, fmt.Errorf("field %d of /proc/PID/stat is %q, not a tick count", 14+k, f[11+k])
		}
		v[k] = n
	}
	return cpuSample{self: v[0] + v[1], children: v[2] + v[3]}, nil
}

// measure sets c from the samples taken around calls model calls of tasks
// tasks.
func (c *loadCPU) measure(before, after cpuSample, tasks, calls int) {
	tick := 1.0 / clockTicks
	c.DaemonSeconds = float64(after.self-before.self) * tick
	c.GitSeconds = float64(after.children-before.children) * tick
	c.ResolutionMs = 1000 * tick
	if calls > 0 {
		c.PerCallMs = 1000 * c.DaemonSeconds / float64(calls)
	}
	if tasks > 0 {
		c.GitPerTaskMs = 1000 * c.GitSeconds / float64(tasks)
	}
}

// write prints c as rows of the load report's table.
func (c loadCPU) write(tw io.Writer) {
	fmt.Fprintf(tw, "  daemon CPU per call\t%.2f ms\t%.2f s of the daemon's CPU from release to the last finish, per call (user + system; target ≤ 2 ms)\n", c.PerCallMs, c.DaemonSeconds)
	fmt.Fprintf(tw, "  git CPU per task\t%.1f ms\t%.2f s in the git processes the daemon ran\n", c.GitPerTaskMs, c.GitSeconds)
}
