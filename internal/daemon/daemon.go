// Package daemon is Neuraphage's composition root: it builds the store, the
// event bus, the tasks service, the runtime that runs tasks and the API
// server, wires them together, and owns their lives.
//
// Run holds a lock file so that one daemon serves a home; a lock left by a
// crashed daemon is released by the kernel, so its stale pid file and socket are
// simply replaced. On start it recovers what the previous run left (tasks that
// were running are marked to resume). Shutdown, from a signal, the API or a
// cancelled context, is ordered and bounded: stop intake (the socket stops
// accepting and watch streams end), stop work, flush the event log, close the
// store, remove the socket and pid file.
package daemon

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/metrics"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

// Options configures Run.
type Options struct {
	Paths   config.Paths
	Config  config.Config
	Version string
	// Logger receives the daemon's logs; nil writes JSON to Paths.LogFile at
	// the configured level.
	Logger *slog.Logger
	// Ready, when set, is called once the socket accepts connections.
	Ready func()
	// Getenv reads the environment (API keys, provider base URLs); nil
	// means os.Getenv.
	Getenv func(string) string
}

// AlreadyRunningError refuses a second daemon on one home.
type AlreadyRunningError struct {
	PID      int
	LockFile string
}

func (e *AlreadyRunningError) Error() string {
	pid := "unknown pid"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("a daemon is already running for this home (%s, lock %s); stop it with `neuraphage daemon stop`", pid, e.LockFile)
}

// Daemon is a running daemon. It implements the server's Daemon interface.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	store   *sqlite.Store
	bus     *event.Bus
	started time.Time

	stopOnce sync.Once
	stop     context.CancelCauseFunc

	models  api.Models  // resolved at start from the config and the environment
	sandbox api.Sandbox // probed at start

	executor *executor.Executor
	stopWork func(context.Context) error
	cluster  *clusterNode // nil unless cluster.enabled

	// metrics feeds GET /metrics on the socket; a web listener mounts
	// metrics.Handler(d.metrics, ...) too.
	metrics *metrics.Collector
}

// Run runs a daemon until ctx ends or a shutdown is requested, then shuts it
// down in order. It returns nil after a clean shutdown.
func Run(ctx context.Context, opts Options) (err error) {
	p := opts.Paths
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	corrected, err := makePrivate(p)
	if err != nil {
		return err
	}
	unlock, err := lock(p.LockFile, p.PIDFile)
	if err != nil {
		return err
	}
	defer unlock()

	logger := opts.Logger
	if logger == nil {
		f, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("opening the log file: %w", err)
		}
		defer f.Close()
		logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: level(opts.Config.Log.Level)}))
	}
	logger = logger.With("component", "daemon")

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	d := &Daemon{opts: opts, log: logger, started: time.Now().UTC(), stop: stop, models: resolveModels(opts.Config.LLM, opts.Getenv)}
	if !d.models.Ready {
		// The daemon still runs: tasks can be created and managed; they need a
		// model only when they start.
		logger.Warn("no model provider is configured", "setup", d.models.Setup)
	}

	var bus *event.Bus
	st, err := sqlite.Open(ctx, p.DBFile, sqlite.Options{
		Publish:      func(evs ...event.Event) { bus.Publish(evs...) },
		OnWriteError: func(err error) { logger.Error("an unacknowledged write was lost", "err", err) },
	})
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	last, err := st.LastEventID(ctx)
	if err != nil {
		st.Close()
		return err
	}
	bus = event.NewBus(event.Options{Buffer: opts.Config.Events.SubscriberBuffer}, last)
	d.store, d.bus = st, bus
	storeClosed := false
	defer func() {
		if !storeClosed {
			err = errors.Join(err, st.Close())
		}
	}()

	personas, err := persona.Load(p.Personas)
	if err != nil {
		return err
	}
	svc := tasks.New(tasks.Options{Store: st, Records: st, Personas: personas,
		Priority: opts.Config.Tasks.DefaultPriority, Engine: opts.Config.Tasks.DefaultEngine, AutoMerge: opts.Config.Merge.Auto,
		Now: time.Now, Rand: rand.Reader, Logger: logger})
	recovered, err := svc.Recover(ctx)
	if err != nil {
		return err
	}
	// The processes tasks' commands start are recorded under the run
	// directory, so that a later daemon finds them if this one dies; the
	// daemon adopts their orphans. Without /proc, commands still end with
	// their process group, and nothing is found after a crash.
	procs, err := proc.NewTracker(filepath.Join(p.RunDir, "procs"), proc.DefaultGrace)
	if err != nil {
		logger.Warn("the processes of tasks' commands are not tracked", "err", err)
	} else {
		if err := procs.Subreaper(); err != nil {
			logger.Warn("orphans of tasks' commands are not adopted", "err", err)
		}
		if cg := procs.Cgroups(); cg != "" {
			logger.Info("tasks' commands run in cgroups of their own", "under", cg)
		}
	}
	sb, err := newTaskSandbox(opts.Config.Sandbox, p, opts.Getenv, st, logger.With("component", "sandbox"))
	if err != nil {
		return err
	}
	d.sandbox = sb.status()
	logger.Info("task sandbox", "mode", d.sandbox.Summary, "network", d.sandbox.Network, "require", d.sandbox.Require)
	cl, err := startCluster(ctx, opts.Config, p, opts.Getenv, st, logger)
	if err != nil {
		return err
	}
	defer cl.close()
	var remote engine.Engine
	if cl != nil {
		remote = cl.coord
	}
	rt, err := newRuntime(opts.Config, opts.Getenv, personas, svc, st, bus, procs, sb, remote, logger)
	if err != nil {
		return err
	}
	d.cluster = cl
	if cl != nil {
		cl.kick = rt.ex.Kick
	}
	defer rt.hooks.Close()
	ex := rt.ex
	d.executor = ex
	// What the commands of a dead daemon's tasks left goes before any
	// task runs or any worktree is touched.
	ex.StopLeftovers(ctx)
	// Lock files of a git killed with the previous daemon, before any git
	// work (each is reported: git.stale_lock).
	if _, err := rt.wt.ClearStaleLocks(ctx, time.Now()); err != nil {
		logger.Error("clearing stale git locks", "err", err)
	}
	// Worktrees whose directories vanished while the daemon was down are
	// made again from their branches; strays are reported, never deleted.
	if rep, err := rt.wt.Reconcile(ctx); err != nil {
		logger.Error("reconciling worktrees", "err", err)
	} else if len(rep.Recreated) > 0 || len(rep.Remade) > 0 || len(rep.Problems) > 0 || len(rep.Strays) > 0 {
		logger.Info("worktrees reconciled", "checked", rep.Checked, "recreated", len(rep.Recreated), "remade", len(rep.Remade), "problems", len(rep.Problems), "strays", len(rep.Strays))
	}
	started := []event.Event{event.New(time.Now(), "", event.DaemonStarted{PID: os.Getpid(), Version: opts.Version})}
	if len(corrected) > 0 {
		for _, c := range corrected {
			logger.Warn("restricted to its owner", "path", c.Path, "mode_was", c.From, "mode", c.To)
		}
		started = append(started, event.New(time.Now(), "", event.DaemonPermissions{Corrected: corrected}))
	}
	if _, err := st.AppendEvents(ctx, started...); err != nil {
		return err
	}

	// A lock holder may replace a socket left by a crashed daemon.
	if err := os.Remove(p.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the stale socket %s: %w", p.Socket, err)
	}
	tokenFile := api.TokenPath(p.Socket)
	token, err := writeToken(tokenFile)
	if err != nil {
		return err
	}
	defer os.Remove(tokenFile)
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", p.Socket, err)
	}
	defer os.Remove(p.Socket)
	if err := os.Chmod(p.Socket, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("restricting %s to its owner: %w", p.Socket, err)
	}
	if err := os.WriteFile(p.PIDFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("writing the pid file: %w", err)
	}
	defer os.Remove(p.PIDFile)

	// Handlers run under streamCtx, which ends first at shutdown so that long
	// watch streams let the server stop.
	streamCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	mcpH := mcpHandler(p.Socket, opts.Version)
	mcpTCP, err := listenMCP(opts.Config.MCP, p, mcpH, func(net.Listener) context.Context { return streamCtx })
	if err != nil {
		ln.Close()
		return err
	}
	var clusterSrv server.Cluster
	if cl != nil {
		clusterSrv = clusterAPI{cl}
	}
	// The counters count every event logged from here on.
	d.metrics = metrics.New(metrics.Options{Store: st, Bus: bus, Version: opts.Version})
	metricsH := metrics.Handler(d.metrics, logger.With("component", "metrics"))
	webCtl := newWebControl(opts.Config.Web, p.Socket, metricsH, token, time.Duration(opts.Config.Daemon.ShutdownTimeoutSecs)*time.Second, logger.With("component", "web"))
	srv := &http.Server{
		Handler: server.RequireToken(withMCP(server.New(server.Config{
			Cluster: clusterSrv,
			Web:     webCtl,
			Tasks:   svc, Personas: svc, Supervision: supervision{ctl: svc, w: rt.sv, sy: rt.sy, ex: svc, st: st}, Knowledge: knowledgeAPI{ctl: svc, st: st}, Watchers: rt.ws, Overlap: overlapAPI{rt.ov}, Daemon: d, Log: st, Bus: bus, Git: server.NewGit(server.GitServices{Tasks: svc, Worktrees: rt.wt, Merges: rt.mq, Main: rt.mw}),
			Reports:         lifecycle.Reporter{Store: st, LogDir: p.LogDir},
			Metrics:         metricsH,
			DefaultPriority: opts.Config.Tasks.DefaultPriority, Logger: logger.With("component", "api"),
		}), mcpH), token, tokenFile),
		BaseContext:       func(net.Listener) context.Context { return streamCtx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	logger.Info("daemon started", "pid", os.Getpid(), "socket", p.Socket, "version", opts.Version, "resume_pending", len(recovered))

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving the API: %w", err)
		}
		return nil
	})
	if mcpTCP != nil {
		logger.Info("serving MCP over TCP", "addr", mcpTCP.ln.Addr().String())
		g.Go(func() error {
			return mcpTCP.serve(gctx, time.Duration(opts.Config.Daemon.ShutdownTimeoutSecs)*time.Second)
		})
	}
	g.Go(func() error { return webCtl.Run(gctx) })
	g.Go(func() error { return d.pruneEvents(gctx) })
	// The executor runs under its own context: shutdown stops it after
	// intake and before the store closes, and waits for it.
	workCtx, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	workDone := make(chan struct{})
	g.Go(func() error {
		defer close(workDone)
		var work errgroup.Group
		work.Go(func() error { return ex.Run(workCtx) })
		work.Go(func() error { return rt.mq.Run(workCtx) })
		work.Go(func() error { return rt.mw.Run(workCtx) })
		work.Go(func() error { return rt.sv.Run(workCtx) })
		work.Go(func() error { return rt.sy.Run(workCtx) })
		work.Go(func() error { return rt.ov.Run(workCtx) })
		work.Go(func() error { return rt.ws.Run(workCtx) })
		work.Go(func() error { return sb.Run(workCtx, bus) })
		work.Go(func() error { return newNotifier(opts.Config.Notify, st, logger).Run(workCtx, bus) })
		if cl != nil {
			work.Go(func() error { return cl.coord.Serve(workCtx) })
			work.Go(func() error { return cl.serveGit(workCtx, opts.Config.Cluster) })
		}
		work.Go(func() error { return d.metrics.Run(workCtx) })
		return work.Wait()
	})
	d.stopWork = func(ctx context.Context) error {
		stopWork()
		select {
		case <-workDone:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("running tasks did not stop in time: %w", ctx.Err())
		}
	}
	if opts.Ready != nil {
		opts.Ready()
	}
	g.Go(func() error {
		<-gctx.Done()
		reason := "context ended"
		if c := context.Cause(gctx); c != nil {
			reason = c.Error()
		}
		return d.shutdown(srv, endStreams, reason, &storeClosed)
	})
	return g.Wait()
}

// shutdown stops the daemon in order, bounded by the configured timeout.
func (d *Daemon) shutdown(srv *http.Server, endStreams context.CancelFunc, reason string, storeClosed *bool) error {
	timeout := time.Duration(d.opts.Config.Daemon.ShutdownTimeoutSecs) * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d.log.Info("daemon stopping", "reason", reason)

	// 1. Stop intake: no new connections; live streams end.
	endStreams()
	if err := srv.Shutdown(ctx); err != nil {
		d.log.Warn("API connections did not close in time; closing them", "err", err)
		srv.Close()
	}
	// 2. Stop work: every run stops; its task goes back to the queue, to
	// resume from its last stored turn.
	var errs []error
	if err := d.stopWork(ctx); err != nil {
		errs = append(errs, err)
	}
	// 3. Flush the event log.
	if _, err := d.store.AppendEvents(ctx, event.New(time.Now(), "", event.DaemonStopping{Reason: reason})); err != nil {
		errs = append(errs, fmt.Errorf("recording the shutdown: %w", err))
	}
	// 4. Close the store: the writer commits what is queued.
	*storeClosed = true
	if err := d.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the store: %w", err))
	}
	d.bus.Close()
	d.log.Info("daemon stopped")
	return errors.Join(errs...)
}

// shutdownRequest is the cause of a shutdown asked for through the API.
type shutdownRequest struct{ reason string }

func (s shutdownRequest) Error() string { return "shutdown " + s.reason }

// Shutdown starts an orderly shutdown and returns at once.
func (d *Daemon) Shutdown(reason string) {
	d.stopOnce.Do(func() { d.stop(shutdownRequest{reason: reason}) })
}

// Health implements server.Daemon.
func (d *Daemon) Health() api.Health {
	return api.Health{Status: "ok", PID: os.Getpid(), Version: d.opts.Version, StartedAt: d.started}
}

// Status implements server.Daemon.
func (d *Daemon) Status(ctx context.Context) (api.Status, error) {
	c, err := d.store.Counts(ctx)
	if err != nil {
		return api.Status{}, err
	}
	p := d.opts.Paths
	return api.Status{
		Health: d.Health(), Socket: p.Socket, DBFile: p.DBFile, ConfigFile: p.ConfigFile, LogFile: p.LogFile,
		Tasks: c.Tasks, Events: c.Events, LastEventID: c.LastID, PendingMessages: c.Pending, Bus: d.bus.Stats(),
		Models: d.models, Running: d.executor.Running(), Held: d.executor.Held(), Sandbox: d.sandbox, Engines: d.engineStatuses(),
		GitProcesses: git.Started(),
	}, nil
}

// pruneEvents deletes events older than the configured retention, hourly.
func (d *Daemon) pruneEvents(ctx context.Context) error {
	days := d.opts.Config.Events.RetentionDays
	if days <= 0 {
		return nil
	}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := d.store.PruneEvents(ctx, time.Now().AddDate(0, 0, -days))
		if err != nil && ctx.Err() == nil {
			d.log.Warn("pruning old events", "err", err)
		} else if n > 0 {
			d.log.Info("pruned old events", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// resolveModels maps every tier to its model, or says how to configure one.
func resolveModels(cfg llm.Config, env func(string) string) api.Models {
	res, err := llm.Resolve(cfg, env)
	if err != nil {
		return api.Models{Setup: err.Error()}
	}
	m := api.Models{Ready: true}
	for _, t := range llm.Tiers() {
		tg, _ := res.Target(t)
		m.Tiers = append(m.Tiers, api.TierModel{Tier: string(t), Provider: tg.Endpoint.Provider, Model: tg.Model, BaseURL: tg.Endpoint.BaseURL})
	}
	return m
}

func level(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// lock takes the home's lock file, or reports the daemon that holds it.
func lock(lockFile, pidFile string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(lockFile), 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(lockFile), err)
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	// A daemon killed while it was starting a process leaves the lock with
	// that child until it has exec'd (close-on-exec): a moment, longer on a
	// loaded machine (a restart right after a kill was refused there after
	// 5 s). While the recorded daemon is gone, the lock is tried again for
	// up to 20 seconds; a live daemon is reported at once.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for deadline := time.Now().Add(20 * time.Second); errors.Is(err, syscall.EWOULDBLOCK) && !alive(ReadPID(pidFile)) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &AlreadyRunningError{PID: ReadPID(pidFile), LockFile: lockFile}
		}
		return nil, fmt.Errorf("locking %s: %w", lockFile, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// alive reports whether process pid exists (0: unknown, taken as alive).
func alive(pid int) bool {
	return pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH
}

// ReadPID returns the pid recorded in a pid file, or 0.
func ReadPID(pidFile string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// engineStatuses is every engine's readiness as `daemon status` shows it.
func (d *Daemon) engineStatuses() []api.EngineStatus {
	var out []api.EngineStatus
	for _, s := range d.executor.EngineStatuses() {
		es := api.EngineStatus{Name: s.Name, Ready: s.Err == nil}
		if s.Err != nil {
			es.Reason = s.Err.Error()
		}
		out = append(out, es)
	}
	return out
}
