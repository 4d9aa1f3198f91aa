package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// heldCallers is how many creations dev load --held keeps in flight: enough
// for the store to commit them in large groups.
const heldCallers = 32

// maxHeldTasks bounds dev load --held: held tasks take no slot, only rows.
const maxHeldTasks = 100_000

// heldListings are the commands dev load --held times, each run as a user
// runs it: a new neuraphage process talking to the daemon.
var heldListings = [][]string{
	{"ps", "--all", "--json"},
	{"ps"},
	{"ps", "--limit", "0"},
	{"ps", "--limit", "50"},
}

// heldReport is what dev load --held measured.
type heldReport struct {
	Tasks          int              `json:"tasks"`
	CreateSeconds  float64          `json:"create_seconds"`
	TasksPerSecond float64          `json:"created_per_second"`
	Listings       []listingTimings `json:"listings"`
	ScratchDir     string           `json:"scratch_dir,omitempty"`
}

// listingTimings are the wall times of one listing command over its runs.
type listingTimings struct {
	Command  string    `json:"command"`
	Runs     int       `json:"runs"`
	MinMs    float64   `json:"min_ms"`
	MedianMs float64   `json:"median_ms"`
	MaxMs    float64   `json:"max_ms"`
	AllMs    []float64 `json:"all_ms"`
	Bytes    int       `json:"bytes"`
}

// runHeldLoad creates opts.tasks held tasks (paused: never dispatched)
// through the API, many at once, then times each of heldListings opts.runs
// times as new processes of exe.
func runHeldLoad(ctx context.Context, d *loadDaemon, exe string, env []string, opts devLoadOpts, repo string) (*heldReport, error) {
	rep := &heldReport{Tasks: opts.tasks}
	start := time.Now()
	g := fanOutLimit(ctx, heldCallers, opts.tasks, func(ctx context.Context, i int) error {
		desc := fmt.Sprintf("held task %d: add token expiry checks to the auth middleware", i+1)
		if i%3 == 0 {
			desc += "\n\nSee docs/auth.md; keep the old tokens working until they expire."
		}
		_, err := d.c.CreateTask(ctx, api.CreateTaskRequest{Description: desc, Repo: repo, Priority: new(i % 5), NoStart: true})
		if err != nil {
			return fmt.Errorf("creating held task %d: %w", i+1, err)
		}
		return nil
	})
	if g != nil {
		return nil, g
	}
	rep.CreateSeconds = time.Since(start).Seconds()
	if rep.CreateSeconds > 0 {
		rep.TasksPerSecond = float64(opts.tasks) / rep.CreateSeconds
	}
	for _, args := range heldListings {
		lt := listingTimings{Command: "neuraphage " + strings.Join(args, " "), Runs: opts.runs}
		for range opts.runs {
			t0 := time.Now()
			// The output is counted, not kept (as by a reader piping it on):
			// holding megabytes here would time this process's allocations
			// and collections on the same cores as the command's.
			res, err := proc.Run(ctx, proc.Cmd{Args: append([]string{exe}, args...), Env: env, Dir: filepath.Dir(repo),
				SeparateStderr: true, MaxOutput: 64 << 10})
			ms := float64(time.Since(t0).Microseconds()) / 1000
			if err != nil {
				return nil, fmt.Errorf("running %s: %w", lt.Command, err)
			}
			if res.ExitCode != 0 {
				return nil, fmt.Errorf("%s exited with code %d: %s", lt.Command, res.ExitCode, strings.TrimSpace(res.Stderr))
			}
			lt.AllMs = append(lt.AllMs, ms)
			lt.Bytes = int(res.OutputBytes)
		}
		sorted := slices.Sorted(slices.Values(lt.AllMs))
		lt.MinMs, lt.MedianMs, lt.MaxMs = sorted[0], sorted[len(sorted)/2], sorted[len(sorted)-1]
		rep.Listings = append(rep.Listings, lt)
	}
	return rep, nil
}

func writeHeldReport(out io.Writer, r *heldReport) {
	fmt.Fprintf(out, "Neuraphage listing load: %d held tasks, created in %.2f s (%.0f/s)\n\n", r.Tasks, r.CreateSeconds, r.TasksPerSecond)
	tw := newTable(out)
	fmt.Fprintln(tw, "  COMMAND\tMIN\tMEDIAN\tMAX\tRUNS\tOUTPUT")
	for _, l := range r.Listings {
		fmt.Fprintf(tw, "  %s\t%.1f ms\t%.1f ms\t%.1f ms\t%d\t%d bytes\n", l.Command, l.MinMs, l.MedianMs, l.MaxMs, l.Runs, l.Bytes)
	}
	tw.Flush()
	if r.ScratchDir != "" {
		fmt.Fprintf(out, "\nscratch directory kept: %s (NEURAPHAGE_HOME=%s)\n", r.ScratchDir, filepath.Join(r.ScratchDir, "home"))
	}
}

// finishHeldLoad runs the --held measurement on the started daemon d, stops
// it and prints the report.
func (a *app) finishHeldLoad(ctx context.Context, d *loadDaemon, exe string, opts devLoadOpts, root, repo string, out io.Writer) error {
	rep, runErr := runHeldLoad(ctx, d, exe, a.loadEnv(filepath.Join(root, "home")), opts, repo)
	if err := d.stop(ctx); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		if opts.keep {
			return fmt.Errorf("%w (scratch directory kept: %s)", runErr, root)
		}
		return runErr
	}
	if opts.keep {
		rep.ScratchDir = root
	}
	if opts.json {
		return writeJSON(out, rep)
	}
	writeHeldReport(out, rep)
	return nil
}
