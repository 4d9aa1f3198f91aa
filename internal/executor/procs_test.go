//go:build linux

package executor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A command still running when its task's run ends (here a call the engine
// left behind) is stopped and reported before the task moves on.
func TestRunEndStopsWhatItsCommandsLeft(t *testing.T) {
	tr, err := proc.NewTracker(filepath.Join(t.TempDir(), "procs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	left := make(chan proc.Result, 1)
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		go func() {
			res, _ := proc.Run(ctx, proc.Cmd{Shell: `echo $$ >"$F.tmp"; mv "$F.tmp" "$F"; exec sleep 1000`, Env: append(os.Environ(), "F="+pidFile)})
			left <- res
		}()
		// Not testkit.WaitFor: this is the run's goroutine, not the test's.
		// The pid file appears while mv still runs; the shell has exec'd
		// sleep, so mv is gone, once the pid's command line says sleep.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil {
				cmd, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/cmdline")
				if strings.HasPrefix(string(cmd), "sleep\x00") {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Error("the command never started")
				break
			}
		}
		return engine.Outcome{Status: engine.Completed, Reason: "done"}
	})
	e.ex.procs = tr
	e.start()
	tk := e.create("leave a command running", 2)
	e.waitStatus(tk.ID, task.Completed)
	select {
	case res := <-left:
		if res.ExitCode != 128+15 {
			t.Errorf("the command ended with %d, want SIGTERM's", res.ExitCode)
		}
	case <-time.After(time.Minute):
		t.Fatal("the left command was not stopped")
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{TaskID: tk.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var stopped, completed int64
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case event.ProcLeftoverStopped:
			if p.Reason != leftoverRunEnd || len(p.Processes) != 1 || strconv.Itoa(p.Processes[0].PID) != pid {
				t.Errorf("reported %+v, want the sleep %s", p, pid)
			}
			stopped = ev.ID
		case event.TaskStatus:
			if p.To == task.Completed {
				completed = ev.ID
			}
		}
	}
	if stopped == 0 || stopped > completed {
		t.Errorf("proc.leftover_stopped is event %d, completion %d: want it reported before the task moved on", stopped, completed)
	}
}
