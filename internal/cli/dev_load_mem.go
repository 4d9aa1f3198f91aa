package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// sampleLoad polls the daemon's status and memory until the tasks have been
// released and all n have settled (none queued, running or merging), recording peaks
// in rep. It writes only the fields it records until it returns.
func sampleLoad(ctx context.Context, d *loadDaemon, n int, released <-chan struct{}, rep *loadReport) error {
	tick := time.NewTicker(loadSampleEvery)
	defer tick.Stop()
	var st api.Status
	for i := 0; ; i++ {
		// Only a status read after the release can show the tasks settled:
		// before it they are all held.
		after := false
		select {
		case <-released:
			after = true
		default:
		}
		asked := i%loadStatusEvery == 0
		if asked {
			var err error
			if st, err = d.c.Status(ctx); err != nil {
				return fmt.Errorf("sampling the daemon: %w", err)
			}
		}
		m, err := readMem(d.pid)
		if err != nil {
			return err
		}
		rep.Samples++
		rep.PeakRSS = max(rep.PeakRSS, m.rss)
		rep.PeakThreads = max(rep.PeakThreads, m.threads)
		rep.PeakFDs = max(rep.PeakFDs, m.fds)
		rep.PeakRunning = max(rep.PeakRunning, len(st.Running))
		if asked && after && st.Tasks[task.Queued] == 0 && st.Tasks[task.Running] == 0 && st.Tasks[task.Merging] == 0 && len(st.Running) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the load tasks (%d running, %d queued, %d finished of %d): %w",
				len(st.Running), st.Tasks[task.Queued], st.Tasks[task.Completed]+st.Tasks[task.Failed]+st.Tasks[task.Cancelled], n, ctx.Err())
		case <-tick.C:
		}
	}
}

// memSample is one reading of a process's memory.
type memSample struct {
	rss, hwm     int64 // bytes: VmRSS, VmHWM
	threads, fds int
}

// readMem reads a process's resident memory, its high-water mark, its
// threads and its open file descriptors from /proc.
func readMem(pid int) (memSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/status")
	if err != nil {
		return memSample{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	m, err := parseProcStatus(string(b))
	if err != nil {
		return memSample{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	if fds, err := os.ReadDir(dir + "/fd"); err == nil {
		m.fds = len(fds)
	}
	return m, nil
}

// parseProcStatus takes VmRSS, VmHWM and Threads from /proc/PID/status.
func parseProcStatus(s string) (memSample, error) {
	var (
		m    memSample
		seen int
	)
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			m.rss, seen = n*1024, seen+1
		case "VmHWM":
			m.hwm, seen = n*1024, seen+1
		case "Threads":
			m.threads, seen = int(n), seen+1
		}
	}
	if seen != 3 {
		return memSample{}, errors.New("no VmRSS, VmHWM and Threads in its status")
	}
	return m, nil
}
