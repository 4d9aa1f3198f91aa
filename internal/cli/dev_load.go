package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type devLoadOpts struct {
	tasks   int
	latency time.Duration
	turns   int
	json    bool
	keep    bool
	timeout time.Duration
	held    bool
	runs    int
	profile string // the daemon's CPU profile, when set
}

func (a *app) newDevLoadCmd() *cobra.Command {
	var opts devLoadOpts
	cmd := &cobra.Command{
		Use:   "load [--tasks N] [--latency D] [--turns N] [--held [--runs N]] [--json]",
		Short: "Measure the daemon's memory per running task and its throughput, offline",
		Long: `load runs many tasks at once on the scripted model server and measures the
daemon that runs them. It makes a scratch git repository and NEURAPHAGE_HOME,
serves the scripted model (Anthropic wire format) from this process, and starts
a real daemon as a child process, so that the memory measured is the daemon's
alone. It samples the daemon's resident memory (VmRSS in /proc) while it is
idle, creates the tasks held and releases them together, samples while they
run, and reports the baseline, the peak, the memory per task ((peak -
baseline) / tasks), the kernel's high-water mark, the wall time until every
task finished and the rates. Each task makes --turns model calls, each
answered after --latency: the first ones read the repository (glob,
read_file), the last completes the task. The scratch directory is removed
unless --keep is given. Linux only. See docs/load.md.

With --held the tasks are created held (paused, so never run) and each
listing (ps --all --json, ps, ps --limit 50) is timed --runs times, run as
a user runs it: a new process talking to the daemon.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDevLoad(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.IntVar(&opts.tasks, "tasks", 200, "tasks to run at once (1 to 10000)")
	f.DurationVar(&opts.latency, "latency", 200*time.Millisecond, "the scripted model's latency per call, in whole milliseconds")
	f.IntVar(&opts.turns, "turns", 5, "model calls per task (1 to 1000)")
	f.BoolVar(&opts.json, "json", false, "print JSON")
	f.BoolVar(&opts.keep, "keep", false, "keep the scratch repository and home (with the daemon's log) for inspection")
	f.DurationVar(&opts.timeout, "timeout", 10*time.Minute, "give up after this long")
	f.BoolVar(&opts.held, "held", false, "create the tasks held (never run) and time the listings (ps) instead")
	f.IntVar(&opts.runs, "runs", 5, "with --held: how many times each listing runs (1 to 100)")
	f.StringVar(&opts.profile, "cpuprofile", "", "write the daemon's CPU profile (pprof, its whole life) to this file")
	return cmd
}

const devLoadUsage = "neuraphage dev load [--tasks 200] [--latency 200ms] [--turns 5] [--held [--runs 5]] [--json]"

func (o devLoadOpts) validate() error {
	bad := func(format string, args ...any) error {
		return &usageError{msg: fmt.Sprintf(format, args...), hint: "usage: " + devLoadUsage}
	}
	switch {
	case o.held && (o.tasks < 1 || o.tasks > maxHeldTasks):
		return bad("--tasks %d: want 1 to %d held tasks", o.tasks, maxHeldTasks)
	case o.held && (o.runs < 1 || o.runs > 100):
		return bad("--runs %d: want 1 to 100", o.runs)
	case !o.held && (o.tasks < 1 || o.tasks > 10_000):
		return bad("--tasks %d: want 1 to 10000 (the limit of executor.max_concurrent)", o.tasks)
	case o.turns < 1 || o.turns > 1000:
		return bad("--turns %d: want 1 to 1000", o.turns)
	case o.latency < 0 || o.latency > time.Minute:
		return bad("--latency %s: want 0 to 1m", o.latency)
	case o.latency%time.Millisecond != 0:
		return bad("--latency %s: the scripted model waits whole milliseconds", o.latency)
	case o.timeout <= 0:
		return bad("--timeout %s: want a positive duration", o.timeout)
	}
	return nil
}

// loadKeyEnv names the variable that carries the scripted model's API key
// to the daemon; the server takes any key.
const loadKeyEnv = "NEURAPHAGE_LOAD_API_KEY"

// loadSampleEvery is how often the daemon's memory is read (from /proc,
// which costs the daemon nothing) while tasks run; its status is asked
// every loadStatusEvery-th sample only, since answering it is the daemon's
// own CPU (it lists every running task) and would be measured as load.
const (
	loadSampleEvery = 20 * time.Millisecond
	loadStatusEvery = 10
)

func (a *app) runDevLoad(ctx context.Context, opts devLoadOpts, out io.Writer) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if _, err := readMem(os.Getpid()); err != nil {
		return fmt.Errorf("dev load reads the daemon's memory from /proc and runs on Linux only: %w", err)
	}
	exe, err := a.env.Executable()
	if err != nil {
		return fmt.Errorf("finding the neuraphage binary to start a daemon: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()

	root, err := os.MkdirTemp("", "np-load")
	if err != nil {
		return fmt.Errorf("making a scratch directory: %w", err)
	}
	if !opts.keep {
		defer os.RemoveAll(root)
	}
	home, repo := filepath.Join(root, "home"), filepath.Join(root, "repo")
	if err := demoRepo(ctx, repo); err != nil {
		return err
	}

	// The scripted model server lives in this process, so its memory is
	// not the daemon's. It is joined before return.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the scripted model server: %w", err)
	}
	srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
	var srv sync.WaitGroup
	srv.Go(func() { llmtest.ServeListener(srvCtx, ln, loadScript(opts.turns, opts.latency), nil) })
	defer func() { stopSrv(); srv.Wait() }()

	p, err := config.ResolvePaths(func(k string) string { return map[string]string{"NEURAPHAGE_HOME": home}[k] })
	if err != nil {
		return err
	}
	cfg := loadConfig("http://"+ln.Addr().String(), opts)
	if err := writeLoadConfig(p, cfg); err != nil {
		return err
	}

	args := []string{exe, "daemon", "start", "--foreground"}
	if opts.profile != "" {
		abs, err := filepath.Abs(opts.profile)
		if err != nil {
			return err
		}
		args = append(args, "--cpuprofile", abs)
	}
	d, err := startLoadDaemon(ctx, args, a.loadEnv(home), p, cfg)
	if err != nil {
		return err
	}
	defer d.kill()
	if opts.held {
		return a.finishHeldLoad(ctx, d, exe, opts, root, repo, out)
	}
	rep, runErr := runLoad(ctx, d, opts, repo)
	if err := d.stop(ctx); err != nil {
		return errors.Join(runErr, err)
	}
	if rep == nil {
		if opts.keep {
			return fmt.Errorf("%w (scratch directory kept: %s)", runErr, root)
		}
		return runErr
	}
	if opts.keep {
		rep.ScratchDir = root
	}
	if opts.json {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		writeLoadReport(out, rep)
	}
	return runErr
}

// loadScript is what every task's model says: turns-1 replies that read the
// repository, then one that completes the task, each after latency.
func loadScript(turns int, latency time.Duration) *llmtest.Script {
	ms := int(latency / time.Millisecond)
	steps := make([]llmtest.Step, turns)
	for i := range steps {
		tc := llmtest.ToolCall{Name: "glob", Input: map[string]any{"pattern": "**/*"}}
		if i%2 == 1 {
			tc = llmtest.ToolCall{Name: "read_file", Input: map[string]any{"path": "README.md"}}
		}
		steps[i] = llmtest.Step{Text: fmt.Sprintf("Looking around, step %d.", i+1), ToolCalls: []llmtest.ToolCall{tc}, LatencyMs: ms}
	}
	steps[turns-1] = llmtest.Step{Text: "Done.", LatencyMs: ms, ToolCalls: []llmtest.ToolCall{
		{Name: "complete_task", Input: map[string]any{"summary": "looked around the repository"}}}}
	return &llmtest.Script{Default: &llmtest.Conversation{Name: "load", Steps: steps}}
}

// loadConfig is the scratch daemon's configuration: every task may run at
// once, and so may every model call (the provider's default cap of 8 calls
// in flight would measure the limiter, not the tasks). The cap is lifted,
// not set to the number of tasks: the router's call for each task and the
// Watcher's evaluations go to the same provider, and with a cap of one
// call per task they queued behind the tasks' calls (one Watcher
// evaluation per task made that task's turn wait a whole model call).
func loadConfig(url string, opts devLoadOpts) config.Config {
	cfg := config.Default()
	cfg.Executor.MaxConcurrent = min(opts.tasks, 10_000)
	cfg.Agent.MaxIterations = max(cfg.Agent.MaxIterations, opts.turns+10)
	an := &cfg.LLM.Providers.Anthropic
	an.BaseURL, an.APIKeyEnv, an.MaxConcurrent = url, loadKeyEnv, 0 // unlimited
	for _, t := range []*string{&cfg.LLM.Tiers.Router.Provider, &cfg.LLM.Tiers.Worker.Provider, &cfg.LLM.Tiers.Expert.Provider} {
		*t = "anthropic"
	}
	cfg.LLM.Tiers.Worker.Model = "claude-sonnet-4-5"
	cfg.LLM.Retry.BaseDelayMs, cfg.LLM.Retry.MaxDelayMs = 50, 200
	return cfg
}

func writeLoadConfig(p config.Paths, cfg config.Config) error {
	data, err := config.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.ConfigDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", p.ConfigDir, err)
	}
	if err := os.WriteFile(p.ConfigFile, data, 0o600); err != nil {
		return fmt.Errorf("writing the scratch config: %w", err)
	}
	return nil
}

// loadEnv is the daemon's environment: the scratch home, the key, and what
// a daemon needs from ours. The Go runtime's knobs pass through so that
// their effect on memory can be measured (GOGC=50 neuraphage dev load).
func (a *app) loadEnv(home string) []string {
	env := []string{"NEURAPHAGE_HOME=" + home, loadKeyEnv + "=scripted"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS"} {
		if v := a.env.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// loadDaemon is the daemon under measurement: a child process of this one
// (through internal/proc, which gives it its own environment and makes sure
// neither it nor anything it started outlives the measurement).
type loadDaemon struct {
	c       *client.Client
	pid     int
	timeout time.Duration // the daemon's shutdown timeout
	cancel  context.CancelFunc
	done    chan struct{}
	res     proc.Result // valid once done is closed
	err     error       // valid once done is closed
}

func startLoadDaemon(ctx context.Context, args []string, env []string, p config.Paths, cfg config.Config) (*loadDaemon, error) {
	shutdown := time.Duration(cfg.Daemon.ShutdownTimeoutSecs) * time.Second
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d := &loadDaemon{c: client.New(p.Socket), timeout: shutdown, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.res, d.err = proc.Run(dctx, proc.Cmd{Args: args, Env: env,
			Dir: filepath.Dir(p.Home), Grace: shutdown + 5*time.Second})
	}()
	deadline := time.Now().Add(time.Duration(cfg.Daemon.StartTimeoutSecs) * time.Second)
	for probe(ctx, d.c) != nil {
		select {
		case <-d.done:
			d.kill()
			if d.err != nil {
				return nil, fmt.Errorf("starting the daemon: %w", d.err)
			}
			return nil, fmt.Errorf("the daemon exited (code %d) before it was ready: %s", d.res.ExitCode, strings.TrimSpace(d.res.Output))
		case <-ctx.Done():
			d.kill()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.kill()
			return nil, fmt.Errorf("the daemon did not answer within %ds; its log is %s", cfg.Daemon.StartTimeoutSecs, p.LogFile)
		}
	}
	h, err := d.c.Health(ctx)
	if err != nil {
		d.kill()
		return nil, err
	}
	d.pid = readPIDFile(p.PIDFile)
	if d.pid == 0 || d.pid != h.PID {
		d.kill()
		return nil, fmt.Errorf("the daemon's pid file %s says %d, its health probe %d", p.PIDFile, d.pid, h.PID)
	}
	return d, nil
}

// stop asks the daemon to shut down in order and waits for it to exit.
func (d *loadDaemon) stop(ctx context.Context) error {
	defer d.c.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.timeout+5*time.Second)
	defer cancel()
	if err := d.c.Shutdown(ctx); err != nil && !errors.Is(err, client.ErrUnreachable) {
		return fmt.Errorf("stopping the daemon: %w", err)
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		d.kill()
		return fmt.Errorf("the daemon (pid %d) did not stop within %s; it was killed", d.pid, d.timeout+5*time.Second)
	}
	if d.err != nil || d.res.ExitCode != 0 {
		return fmt.Errorf("the daemon exited with code %d (%v): %s", d.res.ExitCode, d.err, strings.TrimSpace(d.res.Output))
	}
	return nil
}

// kill ends the daemon (SIGTERM, then SIGKILL after its shutdown timeout)
// unless it has exited, and waits for it. It is idempotent.
func (d *loadDaemon) kill() {
	d.cancel()
	<-d.done
}

func readPIDFile(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// loadReport is what dev load measured. Memory is in bytes.
type loadReport struct {
	Tasks          int     `json:"tasks"`
	TurnsPerTask   int     `json:"turns_per_task"`
	LatencyMs      int64   `json:"latency_ms"`
	DaemonPID      int     `json:"daemon_pid"`
	BaselineRSS    int64   `json:"baseline_rss_bytes"`
	PeakRSS        int64   `json:"peak_rss_bytes"`
	RSSPerTask     float64 `json:"rss_per_task_bytes"`
	PeakHWM        int64   `json:"hwm_bytes"`
	AfterRSS       int64   `json:"after_rss_bytes"`
	PeakRunning    int     `json:"peak_running"`
	PeakThreads    int     `json:"peak_threads"`
	PeakFDs        int     `json:"peak_open_fds"`
	Samples        int     `json:"samples"`
	CreateSeconds  float64 `json:"create_seconds"`
	ReleaseSeconds float64 `json:"release_seconds"`
	WallSeconds    float64 `json:"wall_seconds"`
	IdealSeconds   float64 `json:"ideal_seconds"`
	TasksPerSecond float64 `json:"tasks_per_second"`
	CallsPerSecond float64 `json:"model_calls_per_second"`
	TaskP50Seconds float64 `json:"task_p50_seconds"`
	TaskMaxSeconds float64 `json:"task_max_seconds"`
	Completed      int     `json:"completed"`
	Git            loadGit `json:"git"`
	CPU            loadCPU `json:"cpu"`
	// Phases are the tasks' phases, read from the event log.
	Phases     *loadPhases `json:"phases,omitempty"`
	ScratchDir string      `json:"scratch_dir,omitempty"`
}

// loadCallers is how many API calls run at once to create and release the
// tasks: the store commits concurrent writes together.
const loadCallers = 8

// runLoad creates the tasks held, releases them together, and samples the
// daemon until every task has settled. A report is returned whenever the
// tasks ran, with an error too when some did not complete.
func runLoad(ctx context.Context, d *loadDaemon, opts devLoadOpts, repo string) (*loadReport, error) {
	base, err := readMem(d.pid)
	if err != nil {
		return nil, err
	}
	rep := &loadReport{Tasks: opts.tasks, TurnsPerTask: opts.turns, LatencyMs: opts.latency.Milliseconds(), DaemonPID: d.pid,
		BaselineRSS: base.rss, IdealSeconds: (time.Duration(opts.turns) * opts.latency).Seconds()}

	sctx, stopSampler := context.WithCancel(ctx)
	defer stopSampler()
	released := make(chan struct{})
	var (
		sampler  sync.WaitGroup
		samplErr error
	)
	sampler.Go(func() { samplErr = sampleLoad(sctx, d, opts.tasks, released, rep) })
	abort := func(err error) (*loadReport, error) {
		stopSampler()
		sampler.Wait()
		return nil, err
	}

	// Created held (paused), then resumed together, the tasks all run at
	// once even when creating them takes longer than running them.
	start := time.Now()
	ids := make([]task.ID, opts.tasks)
	err = fanOut(ctx, opts.tasks, func(ctx context.Context, i int) error {
		t, err := d.c.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("load task %d: look around the repository", i+1), Repo: repo, NoStart: true})
		if err != nil {
			return fmt.Errorf("creating load task %d: %w", i+1, err)
		}
		ids[i] = t.ID
		return nil
	})
	if err != nil {
		return abort(err)
	}
	rep.CreateSeconds = time.Since(start).Seconds()
	gitBefore, err := gitProcesses(ctx, d.c)
	if err != nil {
		return abort(err)
	}
	cpuBefore, err := readCPU(d.pid)
	if err != nil {
		return abort(err)
	}
	release := time.Now()
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = string(id)
	}
	res, err := d.c.ActMany(ctx, refs, client.Resume, "released by dev load")
	if err != nil {
		return abort(fmt.Errorf("releasing the load tasks: %w", err))
	}
	for _, it := range res.Results {
		if it.Error != nil {
			return abort(fmt.Errorf("releasing load task %s: %s", it.Ref, it.Error.Message))
		}
	}
	rep.ReleaseSeconds = time.Since(release).Seconds()
	close(released)
	sampler.Wait()
	if samplErr != nil {
		return nil, samplErr
	}
	cpuAfter, err := readCPU(d.pid)
	if err != nil {
		return nil, err
	}
	rep.CPU.measure(cpuBefore, cpuAfter, opts.tasks, opts.tasks*opts.turns)
	end, err := readMem(d.pid)
	if err != nil {
		return nil, err
	}
	rep.AfterRSS, rep.PeakHWM = end.rss, end.hwm
	rep.RSSPerTask = float64(rep.PeakRSS-rep.BaselineRSS) / float64(opts.tasks)

	gitAfter, err := gitProcesses(ctx, d.c)
	if err != nil {
		return nil, err
	}
	rep.Git.measure(gitBefore, gitAfter, opts.tasks)
	ts, err := d.c.ListTasks(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	var (
		spans   []time.Duration
		last    time.Time
		failure string
	)
	for _, t := range ts {
		if t.Status == task.Completed {
			rep.Completed++
		} else if failure == "" {
			failure = fmt.Sprintf("%s is %s: %s", t.ID, t.Status, t.CloseReason)
		}
		if t.FinishedAt != nil && t.StartedAt != nil {
			spans = append(spans, t.FinishedAt.Sub(*t.StartedAt))
			if t.FinishedAt.After(last) {
				last = *t.FinishedAt
			}
		}
	}
	if len(spans) > 0 {
		slices.Sort(spans)
		rep.TaskP50Seconds, rep.TaskMaxSeconds = spans[len(spans)/2].Seconds(), spans[len(spans)-1].Seconds()
		rep.WallSeconds = last.Sub(release).Seconds()
		if rep.WallSeconds > 0 {
			rep.TasksPerSecond = float64(len(spans)) / rep.WallSeconds
			rep.CallsPerSecond = float64(len(spans)*opts.turns) / rep.WallSeconds
		}
	}
	if rep.Phases, err = readPhases(ctx, d.c, ids, opts.latency); err != nil {
		return rep, err
	}
	if rep.Completed < opts.tasks {
		return rep, fmt.Errorf("%d of %d load tasks did not complete; for example %s", opts.tasks-rep.Completed, opts.tasks, failure)
	}
	return rep, nil
}

// fanOut calls fn for 0..n-1, loadCallers at a time, stopping at the first
// error.
func fanOut(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return fanOutLimit(ctx, loadCallers, n, fn)
}

// fanOutLimit is fanOut with limit calls at a time.
func fanOutLimit(ctx context.Context, limit, n int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

func writeLoadReport(out io.Writer, r *loadReport) {
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(out, "Neuraphage load: %d tasks × %d model calls, %dms model latency (scripted model; daemon pid %d)\n\n",
		r.Tasks, r.TurnsPerTask, r.LatencyMs, r.DaemonPID)
	tw := newTable(out)
	fmt.Fprintf(tw, "  daemon RSS baseline\t%s\tidle, before any task\n", mib(r.BaselineRSS))
	fmt.Fprintf(tw, "  daemon RSS peak\t%s\t%d of %d tasks running at once at most\n", mib(r.PeakRSS), r.PeakRunning, r.Tasks)
	fmt.Fprintf(tw, "  RSS per task\t%.2f MiB\t(peak - baseline) / %d tasks; target ≤ 2 MB\n", r.RSSPerTask/(1<<20), r.Tasks)
	fmt.Fprintf(tw, "  daemon VmHWM\t%s\tthe kernel's high-water mark\n", mib(r.PeakHWM))
	fmt.Fprintf(tw, "  daemon RSS after\t%s\tall tasks finished\n", mib(r.AfterRSS))
	fmt.Fprintf(tw, "  threads, open fds\t%d, %d\tpeaks\n", r.PeakThreads, r.PeakFDs)
	fmt.Fprintf(tw, "  wall time\t%.2f s\trelease to last finish; ideal %.2f s (%d × %dms)\n", r.WallSeconds, r.IdealSeconds, r.TurnsPerTask, r.LatencyMs)
	fmt.Fprintf(tw, "  task run time\t%.2f s\tmedian; max %.2f s (started to finished)\n", r.TaskP50Seconds, r.TaskMaxSeconds)
	fmt.Fprintf(tw, "  throughput\t%.1f tasks/s\t%.1f model calls/s\n", r.TasksPerSecond, r.CallsPerSecond)
	fmt.Fprintf(tw, "  completed\t%d of %d\tcreated held in %.2f s, released in %.2f s; %d samples\n", r.Completed, r.Tasks, r.CreateSeconds, r.ReleaseSeconds, r.Samples)
	r.Git.write(tw)
	r.CPU.write(tw)
	tw.Flush()
	if r.Phases != nil {
		writeLoadPhases(out, r.Phases, r.TurnsPerTask)
	}
	if r.PeakRunning < r.Tasks {
		fmt.Fprintf(out, "\nnote: at most %d of the %d tasks ran at once; the per-task figure divides by all %d\n", r.PeakRunning, r.Tasks, r.Tasks)
	}
	if r.ScratchDir != "" {
		fmt.Fprintf(out, "\nscratch directory kept: %s (NEURAPHAGE_HOME=%s)\n", r.ScratchDir, filepath.Join(r.ScratchDir, "home"))
	}
}
