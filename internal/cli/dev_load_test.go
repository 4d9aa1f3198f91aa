package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

func TestDevLoadValidate(t *testing.T) {
	t.Parallel()
	ok := devLoadOpts{tasks: 200, latency: 200 * time.Millisecond, turns: 5, timeout: time.Minute}
	tests := []struct {
		name string
		edit func(o *devLoadOpts)
		msg  string // in the usage error; "" means valid
	}{
		{name: "defaults", edit: func(o *devLoadOpts) {}},
		{name: "no latency", edit: func(o *devLoadOpts) { o.latency = 0 }},
		{name: "the most tasks", edit: func(o *devLoadOpts) { o.tasks = 10_000 }},
		{name: "no tasks", edit: func(o *devLoadOpts) { o.tasks = 0 }, msg: "--tasks 0: want 1 to 10000"},
		{name: "too many tasks", edit: func(o *devLoadOpts) { o.tasks = 10_001 }, msg: "--tasks 10001"},
		{name: "no turns", edit: func(o *devLoadOpts) { o.turns = 0 }, msg: "--turns 0: want 1 to 1000"},
		{name: "negative latency", edit: func(o *devLoadOpts) { o.latency = -time.Millisecond }, msg: "--latency -1ms: want 0 to 1m"},
		{name: "latency finer than a millisecond", edit: func(o *devLoadOpts) { o.latency = 1500 * time.Microsecond }, msg: "whole milliseconds"},
		{name: "no timeout", edit: func(o *devLoadOpts) { o.timeout = 0 }, msg: "--timeout 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := ok
			tt.edit(&o)
			err := o.validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(ue.msg, tt.msg) || !strings.HasPrefix(ue.hint, "usage: neuraphage dev load") {
				t.Errorf("validate() = %#v, want a usage error containing %q with a usage hint", err, tt.msg)
			}
		})
	}
}

// TestDevLoadFlagErrorsExitTwo: bad flags are refused before anything
// starts, with exit code 2 and a hint.
func TestDevLoadFlagErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--tasks", "0"},
		{"--tasks", "many"},
		{"--latency", "fast"},
		{"--latency", "-5ms"},
		{"--turns", "0"},
		{"extra"},
	} {
		code, out, errOut := runCLI(t, t.TempDir(), "", append([]string{"dev", "load"}, args...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "\nhint: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with a hint", args, code, out, errOut)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	t.Parallel()
	status := "Name:\tneuraphage\nVmPeak:\t 1263728 kB\nVmHWM:\t   86212 kB\nVmRSS:\t   84420 kB\nRssAnon:\t   60000 kB\nThreads:\t10\n"
	m, err := parseProcStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := (memSample{rss: 84420 << 10, hwm: 86212 << 10, threads: 10}); m != want {
		t.Errorf("parseProcStatus = %+v, want %+v", m, want)
	}
	if _, err := parseProcStatus("Name:\tkthreadd\nThreads:\t1\n"); err == nil {
		t.Error("a status without memory lines parsed")
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// A command name with spaces and parentheses; utime 250, stime 50,
	// cutime 30, cstime 12.
	line := "4242 (neura (x) phage) S 1 4242 4242 0 -1 4194560 5000 0 0 0 250 50 30 12 20 0 10 0 100 1000000 2000 18446744073709551615\n"
	c, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := (cpuSample{self: 300, children: 42}); c != want {
		t.Errorf("parseProcStat = %+v, want %+v", c, want)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 5000 0 0 0 2x0 50 30 12 20 0"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) parsed", bad)
		}
	}
	var l loadCPU
	l.measure(cpuSample{self: 100, children: 10}, cpuSample{self: 350, children: 110}, 10, 50)
	if l.DaemonSeconds != 2.5 || l.PerCallMs != 50 || l.GitSeconds != 1 || l.GitPerTaskMs != 100 {
		t.Errorf("measure = %+v; want 2.5 s, 50 ms a call, 1 s of git, 100 ms a task", l)
	}
}

func TestLoadScript(t *testing.T) {
	t.Parallel()
	s := loadScript(3, 20*time.Millisecond)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Default.Steps {
		if st.LatencyMs != 20 {
			t.Errorf("step latency %dms, want 20ms", st.LatencyMs)
		}
		names = append(names, st.ToolCalls[0].Name)
	}
	if want := []string{"glob", "read_file", "complete_task"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestWriteLoadReport(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	writeLoadReport(&buf, &loadReport{Tasks: 200, TurnsPerTask: 5, LatencyMs: 200, DaemonPID: 42,
		BaselineRSS: 24 << 20, PeakRSS: 84 << 20, RSSPerTask: 0.3 * (1 << 20), PeakHWM: 85 << 20, AfterRSS: 74 << 20,
		PeakRunning: 150, PeakThreads: 10, PeakFDs: 226, WallSeconds: 1.37, IdealSeconds: 1, Completed: 200,
		CPU: loadCPU{DaemonSeconds: 1.2, PerCallMs: 1.2}})
	out := buf.String()
	for _, want := range []string{
		"200 tasks × 5 model calls, 200ms model latency",
		"daemon RSS baseline  24.0 MiB",
		"daemon RSS peak      84.0 MiB",
		"RSS per task         0.30 MiB",
		"daemon VmHWM         85.0 MiB",
		"completed            200 of 200",
		"daemon CPU per call  1.20 ms",
		"note: at most 150 of the 200 tasks ran at once",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestDevLoadEndToEnd builds the binary and runs a small load: a real
// daemon in a child process, the scripted model in this one. It checks what
// is reported, never how fast or how big.
func TestDevLoadEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a daemon")
	}
	if runtime.GOOS != "linux" {
		t.Skip("dev load reads /proc")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "neuraphage")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{"go", "build", "-o", bin, "github.com/neuraphage/neuraphage-go/cmd/neuraphage"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("building neuraphage: %v %s", err, res.Output)
	}
	var out, errOut bytes.Buffer
	code := Main(Env{
		Args:   []string{"dev", "load", "--tasks", "5", "--latency", "10ms", "--turns", "3", "--json"},
		Stdin:  strings.NewReader(""),
		Stdout: &out, Stderr: &errOut,
		Getenv:     os.Getenv,
		Version:    "test",
		Executable: func() (string, error) { return bin, nil },
		Argv0:      "neuraphage",
	})
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, errOut.String(), out.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"baseline_rss_bytes", "peak_rss_bytes", "rss_per_task_bytes", "hwm_bytes", "after_rss_bytes",
		"peak_running", "wall_seconds", "tasks_per_second", "model_calls_per_second", "daemon_pid", "samples"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report lacks %q: %s", k, out.String())
		}
	}
	if rep["tasks"] != 5.0 || rep["completed"] != 5.0 || rep["turns_per_task"] != 3.0 {
		t.Errorf("report %s: want 5 tasks of 3 turns, all completed", out.String())
	}
	ph, ok := rep["phases"].(map[string]any)
	if !ok {
		t.Fatalf("report lacks the phases: %s", out.String())
	}
	for _, k := range []string{"worktree_wait_seconds", "agent_work_seconds", "land_wait_seconds", "release_to_landed_seconds", "overhead_per_call_ms"} {
		d, ok := ph[k].(map[string]any)
		if !ok || d["p50"] == nil || d["p90"] == nil || d["p99"] == nil || d["max"] == nil {
			t.Errorf("phases lack %q with its percentiles: %s", k, out.String())
		}
	}
	if ph["tasks"] != 5.0 || ph["in_agent_loop_peak"].(float64) < 1 {
		t.Errorf("phases %v: want 5 tasks measured, at least one in the loop", ph)
	}
	if c, ok := rep["cpu"].(map[string]any); !ok || c["daemon_seconds"] == nil || c["per_call_ms"] == nil || c["git_seconds"] == nil {
		t.Errorf("report lacks the daemon's CPU: %s", out.String())
	} else if c["daemon_seconds"].(float64) <= 0 {
		// Running 5 tasks, their worktrees and landings costs ticks.
		t.Errorf("the daemon used no CPU: %v", c)
	}
	if _, kept := rep["scratch_dir"]; kept {
		t.Error("the scratch directory was kept without --keep")
	}
}
