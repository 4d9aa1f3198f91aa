package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/nats-io/nats.go"

	"github.com/neuraphage/neuraphage-go/internal/cluster"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

// WorkerOptions configures a worker process (`neuraphage worker`).
type WorkerOptions struct {
	Paths  config.Paths
	Config config.Config
	Getenv func(string) string
	// Join and Token are the coordinator's URL and this worker's token.
	Join, Token string
	// CAFile is the PEM file of the CA that signed the coordinator's
	// certificate (cluster.tls_cert), when it is not one the system trusts.
	CAFile   string
	Labels   map[string]string
	Capacity int
	Logger   *slog.Logger
	// NATS are extra connection options; Started is told the worker
	// (tests).
	NATS    []nats.Option
	Started func(*cluster.Worker)
}

// WorkerPIDFile is where a worker writes its pid; `worker drain` signals
// it (SIGUSR1).
func WorkerPIDFile(p config.Paths) string { return filepath.Join(p.RunDir, "worker.pid") }

// RunWorker runs a worker until ctx ends or it has drained (SIGUSR1). Its
// tasks run with the native engine, the sandbox and the personas as
// configured in its own home, on the model settings each assignment
// carries.
func RunWorker(ctx context.Context, o WorkerOptions) error {
	p := o.Paths
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	for _, d := range []string{p.DataDir, p.RunDir, p.LogDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	log := o.Logger
	if log == nil {
		f, err := os.OpenFile(filepath.Join(p.LogDir, "worker.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("opening the log file: %w", err)
		}
		defer f.Close()
		log = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: level(o.Config.Log.Level)}))
	}
	set, err := persona.Load(p.Personas)
	if err != nil {
		return err
	}
	sb, err := newTaskSandbox(o.Config.Sandbox, p, o.Getenv, nil, log.With("component", "sandbox"))
	if err != nil {
		return err
	}
	hk := hooks.New(hooks.Options{Logger: log})
	defer hk.Close()
	engineFor := func(a cluster.Assignment) (engine.Engine, error) {
		cfg := o.Config
		cfg.LLM = a.Models
		env := func(k string) string {
			if v, ok := a.Keys[k]; ok {
				return v
			}
			return o.Getenv(k)
		}
		ps, setErr := providers.New(cfg.LLM, env, providers.Options{Logger: log})
		personas := tasks.NewPersonas(set, hk, func(tier llm.Tier) (llm.Client, string, error) {
			if setErr != nil {
				return nil, "", fmt.Errorf("%w: %v", engine.ErrNoModel, setErr)
			}
			c, err := ps.Client(tier)
			if err != nil {
				return nil, "", err
			}
			tg, _ := ps.Resolution().Target(tier)
			return c, tg.Model, nil
		})
		return newNative(cfg, ps, setErr, personas, sb.launcher)
	}
	w, err := cluster.NewWorker(cluster.WorkerOptions{
		URL: o.Join, Token: o.Token, NATSToken: o.Getenv("NEURAPHAGE_NATS_TOKEN"), CAFile: o.CAFile,
		Labels: o.Labels, Capacity: o.Capacity,
		Dir: filepath.Join(filepath.Dir(p.DataDir), "work"), Engine: engineFor,
		Heartbeat: config.DefaultCluster().Heartbeat(), AuthorName: o.Config.Merge.AuthorName, AuthorEmail: o.Config.Merge.AuthorEmail,
		NATS: o.NATS, Logger: log.With("component", "worker"),
	})
	if err != nil {
		return err
	}
	if o.Config.Cluster.HeartbeatMs > 0 {
		w.SetHeartbeat(o.Config.Cluster.Heartbeat())
	}
	pid := WorkerPIDFile(p)
	if err := os.WriteFile(pid, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pid)
	drain := make(chan os.Signal, 1)
	signal.Notify(drain, syscall.SIGUSR1)
	defer signal.Stop(drain)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-drain:
			log.Info("draining: the running tasks finish, no new ones are taken")
			w.Drain()
		case <-done:
		}
	}()
	if o.Started != nil {
		o.Started(w)
	}
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
