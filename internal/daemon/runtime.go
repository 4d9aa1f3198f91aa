package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent"
	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/control"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/workflow"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// runtime is what runs tasks: the executor, the worktrees they run in and
// the merge queue that lands their work.
type runtime struct {
	ex    *executor.Executor
	wt    *worktree.Manager
	mq    *merge.Queue
	mw    *mainwatch.Monitor
	ps    *personaService
	hooks *hooks.Runner
	wf    *workflow.Service
	sv    *supervise.Watcher
	sy    *syncer.Syncer
}

// send is the executor's one door for the merge queue, the main watcher and
// the workflows, which build their injections themselves. It reads rt.ex
// when called: they are built before the executor.
func (rt *runtime) send(ctx context.Context, inj inject.Injection) error {
	_, err := rt.ex.Inject(ctx, inj)
	return err
}

// newRuntime builds the engines, the worktree manager, the merge queue and
// the executor from the configuration.
func newRuntime(cfg config.Config, getenv func(string) string, set *persona.Set, ctl *control.Control, st store.Store, bus *event.Bus, log *slog.Logger) (*runtime, error) {
	rt := &runtime{}
	hs := make([]hooks.Hook, len(cfg.Hooks))
	for i, h := range cfg.Hooks {
		hs[i] = hooks.Hook{Point: hooks.Point(h.On), Command: h.Command, Timeout: h.Timeout()}
	}
	rt.hooks = hooks.New(hooks.Options{Hooks: hs, Logger: log.With("component", "hooks"),
		Report: func(id task.ID, p event.Payload) {
			if err := st.EmitEvents(context.Background(), event.New(time.Now(), id, p)); err != nil {
				log.Warn("recording a hook's outcome", "err", err)
			}
		}})
	providerSet, setErr := providers.New(cfg.LLM, getenv, providers.Options{Logger: log})
	rt.ps = &personaService{set: set, hooks: rt.hooks, models: func(tier llm.Tier) (llm.Client, string, error) {
		if setErr != nil {
			return nil, "", fmt.Errorf("%w: %v", engine.ErrNoModel, setErr)
		}
		c, err := providerSet.Client(tier)
		if err != nil {
			return nil, "", err
		}
		tg, _ := providerSet.Resolution().Target(tier)
		return c, tg.Model, nil
	}}
	native, err := newNative(cfg, providerSet, setErr, rt.ps)
	if err != nil {
		return nil, err
	}
	w, m := cfg.Worktree, cfg.Merge
	rt.wt = worktree.New(worktree.Options{Store: st, Logger: log, Config: worktree.Config{
		Root: w.Root, Base: w.Base, PortEnv: w.PortEnv, AuthorName: m.AuthorName, AuthorEmail: m.AuthorEmail,
		Bootstrap: func(repo string) worktree.Bootstrap {
			b := w.BootstrapFor(repo)
			return worktree.Bootstrap{Copy: b.Copy, Setup: b.Setup, SetupTimeout: b.SetupTimeout()}
		},
	}})
	rt.mq = merge.New(merge.Options{
		Store: st, Worktrees: rt.wt, Logger: log,
		Config: merge.Config{
			Strategy: m.Strategy, Gate: m.Gate, GateTimeout: time.Duration(m.GateTimeoutSecs) * time.Second,
			MaxSendBacks: m.MaxSendBacks, PR: m.PR, Remote: m.Remote, Cleanup: m.Cleanup,
			AuthorName: m.AuthorName, AuthorEmail: m.AuthorEmail,
		},
		// The queue tells a task about a conflict or a failed gate through
		// the executor's one door.
		Inject: rt.send,
		// A landing moves main: the main watcher looks at once.
		Landed: func(repo, _, _ string) { rt.mw.Notify(repo) },
	})
	mw := cfg.Supervision.MainWatcher
	rt.mw = mainwatch.New(mainwatch.Options{
		Store: st, Worktrees: rt.wt, Logger: log,
		Config: mainwatch.Config{
			Enabled: mw.Enabled, Interval: mw.Interval(), MainBranch: mw.MainBranch,
			Urgency: mainwatch.Urgency(mw.NotificationUrgency), Cooldown: mw.Cooldown(),
			Fetch: mw.Fetch, Remote: mw.Remote, NotifyUnrelated: mw.NotifyUnrelated,
			PauseOnConflict: mw.OnConflict == "pause",
		},
		// Notices go through the executor's one door.
		Inject: rt.send,
	})
	// Workflow tasks: their phases are child tasks on their branch.
	rt.wf = workflow.New(workflow.Options{
		Store: st, Logger: log.With("component", "workflow"),
		Create: ctl.Create,
		Depend: func(ctx context.Context, id, blocker task.ID) error {
			_, err := ctl.Depend(ctx, string(id), string(blocker))
			return err
		},
		Resume: func(ctx context.Context, id task.ID) error {
			_, err := rt.ex.Resume(ctx, id, "the workflow's order is in place")
			return err
		},
		Inject: rt.send,
		Commit: rt.wt.Commit,
	})
	rt.ex = executor.New(executor.Options{
		Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{native, rt.wf.Engine()}, Logger: log,
		Config: executor.Config{
			MaxConcurrent: cfg.Executor.MaxConcurrent, DefaultEngine: cfg.Tasks.DefaultEngine,
			MaxIterations: cfg.Agent.MaxIterations,
			TaskUSD:       cfg.Budget.TaskUSD, DailyUSD: cfg.Budget.DailyUSD, FleetUSD: cfg.Budget.FleetUSD,
		},
		Workspace: func(ctx context.Context, t task.Task) (executor.Workspace, error) {
			if t.Phase != nil && t.ParentID != "" {
				// A workflow's phases work in the workflow task's worktree.
				parent, err := st.GetTask(ctx, t.ParentID)
				if err != nil {
					return executor.Workspace{}, fmt.Errorf("reading workflow task %s: %w", t.ParentID, err)
				}
				rt.wf.PhaseStarting(ctx, t)
				t = parent
			}
			wt, err := rt.wt.Provision(ctx, t)
			if err != nil {
				return executor.Workspace{}, err
			}
			return executor.Workspace{Dir: wt.Path, Env: rt.wt.Env(wt)}, nil
		},
		Complete: func(ctx context.Context, id task.ID, summary string) bool {
			if t, err := st.GetTask(ctx, id); err == nil && t.Phase != nil {
				// A phase's work stays on the workflow's branch; the
				// workflow task goes to the merge queue once all are done.
				rt.wf.PhaseDone(ctx, t, summary)
				return false
			}
			return rt.mq.Complete(ctx, id, summary, m.Auto)
		},
		// Blocking rebase requests are carried out by the main watcher at
		// the task's turn boundary.
		Rebase: func(ctx context.Context, t task.Task, _ inject.Injection) executor.RebaseReply {
			r := rt.mw.PerformRebase(ctx, t)
			return executor.RebaseReply{Text: r.Text, Outcome: r.Outcome, Pause: r.Pause}
		},
		Personas: rt.ps,
		// New tasks start informed: the knowledge store's relevant
		// learnings go into their first context.
		Brief: func(ctx context.Context, t task.Task) { rt.sy.Brief(ctx, t) },
	})
	rt.sv = newWatcher(cfg.Supervision.Watcher, set, rt.ps.models, st, bus, rt.ex, rt.hooks, log)
	rt.sy = newSyncer(cfg.Supervision.Syncer, set, rt.ps.models, st, bus, rt.ex, rt.hooks, log)
	return rt, nil
}

// newNative builds the native engine. Without a usable model provider it
// still builds: tasks that start are paused with what to configure. A
// task's model is its own (--model), else its persona's tier's; its system
// prompt is its persona's before the base prompt.
func newNative(cfg config.Config, set *providers.Set, setErr error, ps *personaService) (*agent.Engine, error) {
	rules := make([]tool.Rule, len(cfg.Agent.DenyCommands))
	for i, p := range cfg.Agent.DenyCommands {
		rules[i] = tool.Rule{Pattern: p, Reason: "denied by agent.deny_commands in the config"}
	}
	policy, err := tool.NewPolicy(rules)
	if err != nil {
		return nil, fmt.Errorf("agent.deny_commands: %w", err)
	}
	model := func(t task.Task) (llm.Client, string, error) {
		if setErr != nil {
			return nil, "", fmt.Errorf("%w: %v; then restart the daemon and resume the task", engine.ErrNoModel, setErr)
		}
		tier := ps.Tier(t)
		c, err := set.Client(tier)
		if err != nil {
			return nil, "", err
		}
		name := t.Model
		if name == "" {
			tg, _ := set.Resolution().Target(tier)
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
		System: func(t task.Task) string { return ps.System(t, agent.BaseSystem()) },
		ToolEnv: tool.Env{Policy: policy, MaxOutput: a.MaxToolOutputBytes,
			BashTimeout: tool.Seconds(a.BashTimeoutSecs), MaxBashTimeout: tool.Seconds(a.MaxBashTimeoutSecs)},
		Limits: agent.Limits{MaxToolFailures: a.MaxToolFailures, NoProgress: time.Duration(a.NoProgressSecs) * time.Second},
	}), nil
}

// tasks is the API's view of task operations: the control plane, with the
// operations on a task's life routed through the executor, the one door
// for messages, personas checked and workflows started.
type tasks struct {
	*control.Control
	ex  *executor.Executor
	st  store.Store
	set *persona.Set
	wf  *workflow.Service
}

// Create checks the persona and the workflow's personas against the
// daemon's persona set (unknown ones are the user's to fix) and creates
// the task, or the workflow task with its phases.
func (t tasks) Create(ctx context.Context, spec task.Spec) (task.Task, error) {
	if spec.Persona != "" {
		if _, err := t.set.Assignable(spec.Persona); err != nil {
			return task.Task{}, &task.InvalidError{Field: "persona", Msg: err.Error()}
		}
	}
	if len(spec.Workflow) > 0 {
		if err := t.set.CheckPhases(spec.Workflow); err != nil {
			return task.Task{}, &task.InvalidError{Field: "workflow", Msg: err.Error()}
		}
		return t.wf.Start(ctx, spec)
	}
	return t.Control.Create(ctx, spec)
}

// Escalate implements server.Personas: a refusal is the user's to fix.
func (t tasks) Escalate(ctx context.Context, ref, to, reason string) (api.Escalation, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return api.Escalation{}, err
	}
	e, err := t.ex.Escalate(ctx, id, to, reason, "user")
	var refused *executor.EscalationRefusedError
	if errors.As(err, &refused) {
		return api.Escalation{}, &task.InvalidError{Field: "task", Msg: fmt.Sprintf("%s cannot be escalated: %v", refused.ID, refused.Err)}
	}
	if err != nil {
		return api.Escalation{}, err
	}
	return api.Escalation{TaskID: e.TaskID, From: e.From, To: e.To, Applied: e.Applied}, nil
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

// Cancel cancels a task; a workflow task's unfinished phase tasks go with
// it.
func (t tasks) Cancel(ctx context.Context, ref, reason string) (task.Task, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return task.Task{}, err
	}
	out, err := t.ex.Cancel(ctx, id, reason)
	if err != nil || len(out.Workflow) == 0 {
		return out, err
	}
	kids, err := t.st.ListTasks(ctx, store.ListOptions{ParentID: id})
	if err != nil {
		return out, err
	}
	for _, k := range kids {
		if k.Phase != nil && !k.Status.Terminal() {
			if _, err := t.ex.Cancel(ctx, k.ID, "its workflow "+string(id)+" was cancelled"); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func (t tasks) Send(ctx context.Context, ref, text string, urgent bool) (inject.Injection, error) {
	id, err := t.Resolve(ctx, ref)
	if err != nil {
		return inject.Injection{}, err
	}
	return t.ex.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Message, Source: inject.FromUser, Text: text, Urgent: urgent})
}
