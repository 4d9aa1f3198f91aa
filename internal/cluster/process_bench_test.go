package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// procUsage is what /proc says of a running process: its peak resident
// set, and the CPU it and its waited-for children (git, the tools) used.
type procUsage struct {
	peakMB        float64
	cpuS, childCS float64
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times on Linux.
const clockTicks = 100

func readUsage(pid int) (procUsage, error) {
	var u procUsage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return u, err
			}
			u.peakMB = kb / 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The fields after the command's closing parenthesis: state is the
	// first (field 3), utime, stime, cutime, cstime are fields 14 to 17.
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 15 {
		return u, fmt.Errorf("/proc/%d/stat is short: %q", pid, stat)
	}
	var t [4]float64
	for i := range t {
		if t[i], err = strconv.ParseFloat(rest[11+i], 64); err != nil {
			return u, err
		}
	}
	u.cpuS, u.childCS = (t[0]+t[1])/clockTicks, (t[2]+t[3])/clockTicks
	return u, nil
}

// 1,000 scripted tasks of three turns across 4 `neuraphage worker`
// processes of 8 slots each, the coordinator a daemon process of its own:
// every task lands on main; the coordinator's and the workers' peak RSS
// and CPU seconds come from /proc at the end. It takes many minutes, so it
// runs only with NEURAPHAGE_CLUSTER_LOAD=1.
func BenchmarkCoordinator1000Across4Workers(b *testing.B) {
	if os.Getenv("NEURAPHAGE_CLUSTER_LOAD") != "1" {
		b.Skip("runs 1,000 tasks through five processes for minutes: NEURAPHAGE_CLUSTER_LOAD=1 go test -run '^$' -bench Coordinator1000Across4Workers -benchtime 1x -timeout 60m ./internal/cluster/")
	}
	const ntasks, steps, workers, capacity = 1000, 2, 4, 8
	// On a loaded machine a worker may miss its beats and its tasks move:
	// a beat a second, lost after 30 missed. A task moved in the middle of
	// complete_task is told the call's effect is not known and calls it
	// again: the script has that second call.
	done := "      - tool_calls: [{name: complete_task, input: {summary: \"markers written\"}}]\n"
	script := strings.ReplaceAll(processScript(ntasks, steps, 0), done, done+done)
	pc := startProcCluster(b, script, workers, capacity, workers*capacity, 1000, 30)
	ctx := context.Background()
	// git's automatic gc, run by a commit of the coordinator's once
	// thousands of refs are loose, can outlast the commit's deadline under
	// this load (the task then pauses): off in this repository.
	if _, err := git.Run(ctx, pc.repo, "config", "gc.auto", "0"); err != nil {
		b.Fatal(err)
	}
	before, err := readUsage(pc.coord.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 1; i <= ntasks; i++ {
		if _, err := pc.c.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("marker task %d", i), Repo: pc.repo}); err != nil {
			b.Fatal(err)
		}
	}
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	for {
		ts, err := pc.c.ListTasks(ctx, nil, true)
		if err != nil {
			b.Fatal(err)
		}
		done := 0
		for _, t := range ts {
			if t.Status.Terminal() {
				if t.Status != task.Completed {
					b.Fatalf("%s is %s (%s), want completed", t.ID, t.Status, t.CloseReason)
				}
				done++
			}
		}
		if done == ntasks {
			break
		}
		if time.Since(start) > 50*time.Minute {
			b.Fatalf("%d of %d tasks finished in 50 minutes", done, ntasks)
		}
		<-poll.C
	}
	testkit.WaitFor(b, "every task landed on main", func() bool {
		ms, err := pc.c.MergeStatus(ctx, 0)
		return err == nil && len(ms.Open) == 0
	})
	elapsed := time.Since(start)
	b.StopTimer()
	coord, err := readUsage(pc.coord.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	var wPeak, wCPU float64
	for name, w := range pc.workers {
		u, err := readUsage(w.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("worker %s: peak RSS %.0f MB, CPU %.1f s (+%.1f s of its children)", name, u.peakMB, u.cpuS, u.childCS)
		wPeak = max(wPeak, u.peakMB)
		wCPU += u.cpuS
	}
	// Every marker line of every task is on main, once.
	out, err := git.Run(ctx, pc.repo, "grep", "-h", "-e", "-step-", "main", "--", "markers-*.txt")
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Fields(out) {
		seen[line]++
	}
	for i := 1; i <= ntasks; i++ {
		for s := 1; s <= steps; s++ {
			if m := fmt.Sprintf("t%d-step-%d", i, s); seen[m] != 1 {
				b.Errorf("%s is on main %d times, want once", m, seen[m])
			}
		}
	}
	b.Logf("coordinator: peak RSS %.0f MB, CPU %.1f s (+%.1f s of git and its other children) in %s",
		coord.peakMB, coord.cpuS-before.cpuS, coord.childCS-before.childCS, elapsed.Round(time.Second))
	b.ReportMetric(elapsed.Seconds(), "wall-s")
	b.ReportMetric(coord.peakMB, "coordinator-MB-peak")
	b.ReportMetric(coord.cpuS-before.cpuS, "coordinator-cpu-s")
	b.ReportMetric(coord.childCS-before.childCS, "coordinator-children-cpu-s")
	b.ReportMetric((coord.cpuS-before.cpuS)*1000/ntasks, "coordinator-cpu-ms/task")
	b.ReportMetric(wPeak, "worker-MB-peak")
	b.ReportMetric(wCPU, "workers-cpu-s")
}
