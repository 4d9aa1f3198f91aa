package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent"
	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/control"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// newExecutor builds the engines and the executor from the configuration.
func newExecutor(cfg config.Config, getenv func(string) string, st store.Store, bus *event.Bus, log *slog.Logger) (*executor.Executor, error) {
	native, err := newNative(cfg, getenv, log)
	if err != nil {
		return nil, err
	}
	return executor.New(executor.Options{
		Store: st, Bus: bus, Engines: []engine.Engine{native}, Logger: log,
		Config: executor.Config{
			MaxConcurrent: cfg.Executor.MaxConcurrent, DefaultEngine: cfg.Tasks.DefaultEngine,
			MaxIterations: cfg.Agent.MaxIterations,
			TaskUSD:       cfg.Budget.TaskUSD, DailyUSD: cfg.Budget.DailyUSD, FleetUSD: cfg.Budget.FleetUSD,
		},
	}), nil
}

// newNative builds the native engine. Without a usable model provider it
// still builds: tasks that start are paused with what to configure.
func newNative(cfg config.Config, getenv func(string) string, log *slog.Logger) (*agent.Engine, error) {
	rules := make([]tool.Rule, len(cfg.Agent.DenyCommands))
	for i, p := range cfg.Agent.DenyCommands {
		rules[i] = tool.Rule{Pattern: p, Reason: "denied by agent.deny_commands in the config"}
	}
	policy, err := tool.NewPolicy(rules)
	if err != nil {
		return nil, fmt.Errorf("agent.deny_commands: %w", err)
	}
	set, setErr := providers.New(cfg.LLM, getenv, providers.Options{Logger: log})
	model := func(t task.Task) (llm.Client, string, error) {
		if setErr != nil {
			return nil, "", fmt.Errorf("%w: %v; then restart the daemon and resume the task", engine.ErrNoModel, setErr)
		}
		c, err := set.Client(llm.TierWorker)
		if err != nil {
			return nil, "", err
		}
		name := t.Model
		if name == "" {
			tg, _ := set.Resolution().Target(llm.TierWorker)
			name = tg.Model
		}
		return c, name, nil
	}
	window := func(model string) int {
		if setErr != nil {
			return 0
		}
		for _, p := range llm.Providers() {
			if m, ok := set.Catalogue().Lookup(p, model); ok {
				return m.ContextWindow
			}
		}
		return 0
	}
	ready := func() error {
		if setErr != nil {
			return fmt.Errorf("%w: %v; then restart the daemon", engine.ErrNoModel, setErr)
		}
		return nil
	}
	a := cfg.Agent
	return agent.New(agent.Options{
		Model: model, Ready: ready, ContextWindow: window,
		ToolEnv: tool.Env{Policy: policy, MaxOutput: a.MaxToolOutputBytes,
			BashTimeout: tool.Seconds(a.BashTimeoutSecs), MaxBashTimeout: tool.Seconds(a.MaxBashTimeoutSecs)},
		Limits: agent.Limits{MaxToolFailures: a.MaxToolFailures, NoProgress: time.Duration(a.NoProgressSecs) * time.Second},
	}), nil
}

// tasks is the API's view of task operations: the control plane, with the
// operations on a task's life routed through the executor, the one door
// for messages.
type tasks struct {
	*control.Control
	ex *executor.Executor
}

func (t tasks) Pause(ctx context.Context, ref, reason string) (task.Task, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return task.Task{}, err
	}
	return t.ex.Pause(ctx, id, reason)
}

func (t tasks) Resume(ctx context.Context, ref, reason string) (task.Task, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return task.Task{}, err
	}
	return t.ex.Resume(ctx, id, reason)
}

func (t tasks) Cancel(ctx context.Context, ref, reason string) (task.Task, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return task.Task{}, err
	}
	return t.ex.Cancel(ctx, id, reason)
}

func (t tasks) Send(ctx context.Context, ref, text string, urgent bool) (store.Injection, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return store.Injection{}, err
	}
	return t.ex.Inject(ctx, executor.Injection{TaskID: id, Kind: engine.Message, Source: "user", Text: text, Urgent: urgent})
}
