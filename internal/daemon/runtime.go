package daemon

import (
	"cmp"
	"context"
	"fmt"
	"github.com/neuraphage/neuraphage-go/internal/overlap"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent"
	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/claude"
	"github.com/neuraphage/neuraphage-go/internal/engine/codex"
	"github.com/neuraphage/neuraphage-go/internal/engine/gemini"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
	"github.com/neuraphage/neuraphage-go/internal/watchers"
	"github.com/neuraphage/neuraphage-go/internal/workflow"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// runtime is what runs tasks: the executor, the worktrees they run in and
// the merge queue that lands their work.
type runtime struct {
	svc   *tasks.Service
	ex    *executor.Executor
	wt    *worktree.Manager
	mq    *merge.Queue
	mw    *mainwatch.Monitor
	ps    *tasks.Personas
	hooks *hooks.Runner
	wf    *workflow.Service
	sv    *supervise.Watcher
	sy    *syncer.Syncer
	ov    *overlap.Radar
	ws    *watchers.Service
}

// send is the door for the merge queue's, the main watcher's and the
// workflows' injections, which they build themselves: the tasks service,
// which hands them to the executor.
func (rt *runtime) send(ctx context.Context, inj inject.Injection) error {
	_, err := rt.svc.Inject(ctx, inj)
	return err
}

// newRuntime builds the engines, the worktree manager, the merge queue and
// the executor from the configuration, each acting on tasks through svc,
// and binds svc to them.
func newRuntime(cfg config.Config, getenv func(string) string, set *persona.Set, svc *tasks.Service, st store.Store, bus *event.Bus, procs *proc.Tracker, sb *taskSandbox, remote engine.Engine, log *slog.Logger) (*runtime, error) {
	rt := &runtime{svc: svc}
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
	rt.ps = tasks.NewPersonas(set, rt.hooks, func(tier llm.Tier) (llm.Client, string, error) {
		if setErr != nil {
			return nil, "", fmt.Errorf("%w: %v", engine.ErrNoModel, setErr)
		}
		c, err := providerSet.Client(tier)
		if err != nil {
			return nil, "", err
		}
		tg, _ := providerSet.Resolution().Target(tier)
		return c, tg.Model, nil
	})
	native, err := newNative(cfg, providerSet, setErr, rt.ps, sb.launcher)
	if err != nil {
		return nil, err
	}
	claudeEng := newClaude(cfg, getenv, set, sb, log)
	codexEng := newCodex(cfg, getenv, set, providerSet, setErr, sb, log)
	geminiEng := newGemini(cfg, getenv, set, providerSet, sb, log)
	w, m := cfg.Worktree, cfg.Merge
	rt.wt = worktree.New(worktree.Options{Store: st, Logger: log, Config: worktree.Config{
		Root: w.Root, Base: w.Base, PortEnv: w.PortEnv, AuthorName: m.AuthorName, AuthorEmail: m.AuthorEmail,
		IgnoredSkip: w.IgnoredSkip, Parallel: w.Parallel,
		Bootstrap: func(repo string) worktree.Bootstrap {
			b := w.BootstrapFor(repo)
			return worktree.Bootstrap{Copy: b.Copy, Setup: b.Setup, SetupTimeout: b.SetupTimeout()}
		},
		Confine: sb.confine,
	}})
	rt.mq = merge.New(merge.Options{
		Store: st, Tasks: svc, Worktrees: rt.wt, Logger: log,
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
		// An entry that conflicts once the smaller overlapping change
		// ordered before it landed is told to rebase by the main watcher.
		Yield: func(ctx context.Context, y merge.Yield) error { return rt.mw.TellRebase(ctx, y.TaskID, y.Reason) },
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
		// Notices go through the executor's one door; all those of one
		// move of main in one store commit.
		Inject: rt.send, InjectMany: svc.InjectMany,
	})
	// Workflow tasks: their phases are child tasks on their branch.
	rt.wf = workflow.New(workflow.Options{
		Store: st, Logger: log.With("component", "workflow"),
		Create: svc.Add, // the phases' personas are checked with the workflow
		Depend: func(ctx context.Context, id, blocker task.ID) error {
			_, err := svc.Depend(ctx, id, blocker)
			return err
		},
		Resume: func(ctx context.Context, id task.ID) error {
			_, err := svc.Resume(ctx, id, "the workflow's order is in place")
			return err
		},
		Inject: rt.send,
		Commit: rt.wt.Commit,
	})
	// With a cluster, the native engine's tasks run on workers.
	first := engine.Engine(native)
	if remote != nil {
		first = remote
	}
	rt.ex = executor.New(executor.Options{
		Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{first, claudeEng, codexEng, geminiEng, rt.wf.Engine()}, Logger: log,
		Config: executor.Config{
			MaxConcurrent: cfg.Executor.MaxConcurrent, DefaultEngine: cfg.Tasks.DefaultEngine,
			MaxIterations: cfg.Agent.MaxIterations,
			TaskUSD:       cfg.Budget.TaskUSD, DailyUSD: cfg.Budget.DailyUSD, FleetUSD: cfg.Budget.FleetUSD,
			ToolTimeout: time.Duration(cfg.Agent.MaxBashTimeoutSecs) * time.Second,
		},
		Workspace: func(ctx context.Context, t task.Task) (executor.Workspace, error) {
			t, err := rt.wf.WorkTask(ctx, t) // a phase works in its workflow's worktree
			if err != nil {
				return executor.Workspace{}, err
			}
			wt, err := rt.wt.Provision(ctx, t)
			if err != nil {
				return executor.Workspace{}, err
			}
			// The main watcher watches the refs of the repositories its
			// tasks work on: a task's first worktree in a repository is
			// watched before its task runs, not at the watcher's next pass.
			rt.mw.Track(ctx, wt)
			// Its commands get a temporary directory of their own, the one
			// place besides the worktree the sandbox lets them write.
			tmp, err := sb.prepare(ctx, t.ID)
			if err != nil {
				return executor.Workspace{}, err
			}
			return executor.Workspace{Dir: wt.Path, Branch: wt.Branch, Env: append(rt.wt.Env(wt), tmp...)}, nil
		},
		Complete: svc.Completed,
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
		Procs: procs,
		// Each task's sandbox manifest, at its first start: the
		// deterministic default, refined by the router tier when
		// sandbox.model_pass is set.
		Manifest: rt.manifest(cfg.Sandbox, sb, getenv, providerSet, setErr),
	})
	svc.Bind(tasks.Runtime{Runner: rt.ex, Workflows: rt.wf, Merges: rt.mq, Rebases: rt.mw})
	rt.sv = newWatcher(cfg.Supervision.Watcher, set, rt.ps.Models(), st, bus, svc, rt.hooks, log)
	rt.sy = newSyncer(cfg.Supervision.Syncer, set, rt.ps.Models(), st, bus, svc, rt.hooks, log)
	rt.ov = overlap.New(overlap.Options{Config: overlap.Config{Enabled: cfg.Supervision.Overlap.Enabled},
		Store: st, Bus: bus, Log: st, Inject: svc.Inject, Logger: log})
	rt.ws = newWatchers(cfg.Supervision.Sessions, set, rt.ps.Models(), st, bus, svc, log)
	return rt, nil
}

// newNative builds the native engine. Without a usable model provider it
// still builds: tasks that start are paused with what to configure. A
// task's model is its own (--model), else its persona's tier's; its system
// prompt is its persona's before the base prompt.
func newNative(cfg config.Config, set *providers.Set, setErr error, ps *tasks.Personas, launcher *sandbox.Launcher) (*agent.Engine, error) {
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
		ToolEnv: tool.Env{Policy: policy, MaxOutput: a.MaxToolOutputBytes, EnvAllow: a.EnvAllow,
			BashTimeout: tool.Seconds(a.BashTimeoutSecs), MaxBashTimeout: tool.Seconds(a.MaxBashTimeoutSecs),
			Sandbox: launcher},
		Limits: agent.Limits{MaxToolFailures: a.MaxToolFailures, NoProgress: time.Duration(a.NoProgressSecs) * time.Second},
	}), nil
}

// newClaude builds the Claude Code engine. Neuraphage's Anthropic settings
// (llm.providers.anthropic: base_url, the key its api_key_env names) go to
// the CLI when set; otherwise the CLI keeps its own login. Each task's
// CLAUDE_CONFIG_DIR lives under the data directory, beside the tasks'
// temporary directories.
func newClaude(cfg config.Config, getenv func(string) string, set *persona.Set, sb *taskSandbox, log *slog.Logger) *claude.Engine {
	c := cfg.Engines.Claude
	// As the model layer resolves them (llm.Resolve): the config's base
	// URL, else ANTHROPIC_BASE_URL; the key from api_key_env, else
	// ANTHROPIC_API_KEY.
	an := cfg.LLM.Providers.Anthropic
	base := cmp.Or(an.BaseURL, strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")))
	key := strings.TrimSpace(getenv(cmp.Or(an.APIKeyEnv, "ANTHROPIC_API_KEY")))
	return claude.New(claude.Options{
		Command: c.Command, Args: c.Args, PermissionMode: c.PermissionMode, AllowedTools: c.AllowedTools,
		Model: func(t task.Task) string {
			if t.Model != "" {
				return t.Model
			}
			if p, ok := set.Get(t.Persona); ok {
				return c.Models[string(p.Tier)]
			}
			return ""
		},
		StateDir: filepath.Join(filepath.Dir(sb.tmpRoot), "engines", "claude"),
		BaseURL:  base, APIKey: key,
		// Permission denials are recovered from under the user's policy
		// (sandbox.recovery, docs/lifecycle.md).
		Recovery: &lifecycle.Recoverer{Policy: taskPolicy(cfg.Sandbox, sb, getenv)},
		Launcher: sb.launcher, Logger: log,
	})
}

// newCodex builds the Codex engine. Neuraphage's OpenAI settings
// (llm.providers.openai: base_url, the key its api_key_env names), else
// OPENAI_BASE_URL and OPENAI_API_KEY, point the CLI at that endpoint
// through a custom provider; with none, the CLI keeps its own login. Each
// task's CODEX_HOME lives under the data directory, beside the tasks'
// temporary directories.
func newCodex(cfg config.Config, getenv func(string) string, set *persona.Set, ps *providers.Set, setErr error, sb *taskSandbox, log *slog.Logger) *codex.Engine {
	c := cfg.Engines.Codex
	oa := cfg.LLM.Providers.OpenAI
	base := cmp.Or(oa.BaseURL, strings.TrimSpace(getenv("OPENAI_BASE_URL")))
	key := strings.TrimSpace(getenv(cmp.Or(oa.APIKeyEnv, "OPENAI_API_KEY")))
	var cat *llm.Catalogue
	if setErr == nil && ps != nil {
		cat = ps.Catalogue()
	}
	rec := lifecycle.Recoverer{Policy: taskPolicy(cfg.Sandbox, sb, getenv)}
	return codex.New(codex.Options{
		Command: c.Command, Args: c.Args,
		Model: func(t task.Task) string {
			if t.Model != "" {
				return t.Model
			}
			if p, ok := set.Get(t.Persona); ok {
				return c.Models[string(p.Tier)]
			}
			return ""
		},
		StateDir: filepath.Join(filepath.Dir(sb.tmpRoot), "engines", "codex"),
		BaseURL:  base, APIKey: key, Network: cfg.Sandbox.Network.Allows(),
		Catalogue: cat, Recovery: &rec,
		Launcher: sb.launcher, Logger: log,
	})
}

// newGemini builds the Gemini CLI engine. Neuraphage's Gemini settings
// (llm.providers.gemini: base_url, the key its api_key_env names; else
// GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY) go to the CLI when set;
// otherwise the CLI keeps its own login. Each task's HOME for the CLI lives
// under the data directory, beside the tasks' temporary directories.
func newGemini(cfg config.Config, getenv func(string) string, set *persona.Set, ps *providers.Set, sb *taskSandbox, log *slog.Logger) *gemini.Engine {
	c := cfg.Engines.Gemini
	gm := cfg.LLM.Providers.Gemini
	base := cmp.Or(gm.BaseURL, strings.TrimSpace(getenv("GOOGLE_GEMINI_BASE_URL")))
	key := strings.TrimSpace(getenv(cmp.Or(gm.APIKeyEnv, "GEMINI_API_KEY")))
	cat := llm.NewCatalogue(nil)
	if ps != nil {
		cat = ps.Catalogue()
	}
	recoverer := lifecycle.Recoverer{Policy: taskPolicy(cfg.Sandbox, sb, getenv)}
	return gemini.New(gemini.Options{
		Command: c.Command, Args: c.Args,
		Model: func(t task.Task) string {
			if t.Model != "" {
				return t.Model
			}
			if p, ok := set.Get(t.Persona); ok {
				if m := c.Models[string(p.Tier)]; m != "" {
					return m
				}
			}
			return c.Model
		},
		Price: func(model string, u llm.Usage) float64 {
			if m, ok := cat.Lookup(llm.ProviderGemini, model); ok {
				return m.Cost(u)
			}
			return 0
		},
		StateDir: filepath.Join(filepath.Dir(sb.tmpRoot), "engines", "gemini"),
		BaseURL:  base, APIKey: key,
		Recover:  &recoverer,
		Launcher: sb.launcher, Logger: log,
	})
}
