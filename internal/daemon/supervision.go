package daemon

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

// newWatcher builds the Watcher from the configuration: tier 2 is the
// watcher persona on its tier, when that persona is enabled and a model
// is configured.
func newWatcher(cfg config.Watcher, set *persona.Set, models func(llm.Tier) (llm.Client, string, error),
	st store.Store, bus *event.Bus, ex *tasks.Service, hs *hooks.Runner, log *slog.Logger) *supervise.Watcher {
	p, ok := set.Get("watcher")
	tier2 := cfg.Tier2 && ok && p.Enabled
	var (
		judge supervise.Judge
		w     *supervise.Watcher
	)
	if tier2 {
		judge = supervise.ModelJudge{
			Model:   func() (llm.Client, string, error) { return models(p.Tier) },
			System:  p.SystemPrompt,
			Timeout: time.Duration(cfg.Tier2TimeoutSecs) * time.Second,
			Spent:   func(id task.ID, u llm.Usage, usd float64) { w.Spent(id, u, usd) },
		}
	}
	w = supervise.New(supervise.Options{
		Config: supervise.Config{
			Enabled: cfg.Enabled, Interval: cfg.Interval(),
			Stuck: stuck.Config{Window: cfg.WindowSteps, Grace: cfg.GraceSteps, Repeat: cfg.Repeat, Failing: cfg.Failing,
				Monologue: cfg.Monologue, Alternation: cfg.Alternation, Dense: cfg.Dense, DenseOf: cfg.DenseOf,
				ContextErrors: cfg.ContextErrors, EmptyReplies: cfg.EmptyReplies, Apologies: cfg.Apologies,
				NoProgress: time.Duration(cfg.NoProgressSecs) * time.Second, RunawayTokens: cfg.RunawayTokens,
				RunawayUSD: cfg.RunawayUSD, Wandering: cfg.Wandering, WanderingAct: cfg.WanderingAct, Persist: cfg.Persist,
				SameFailure: cfg.SameFailure, Talk: cfg.Talk, ModelErrors: cfg.ModelErrors, Reask: cfg.Reask,
				Circles: cfg.Circles, Similarity: cfg.Similarity, Loose: cfg.Loose},
			Tier2: tier2, Tier2Every: time.Duration(cfg.Tier2EverySecs) * time.Second,
			Nudges: cfg.Nudges, StepsToHeed: cfg.StepsToHeed, Escalate: cfg.Escalate, Pause: cfg.Pause, Abort: cfg.Abort,
			HardTokens: cfg.HardTokens, HardUSD: cfg.HardUSD,
		},
		Store: st, Bus: bus, Actions: ex, Judge: judge, Hooks: hs, Logger: log,
		Excerpt: func(ctx context.Context, id task.ID) string { return supervise.Excerpt(ctx, st, id) },
	})
	return w
}

// supervision serves the Watcher's views and the manual nudge to the API.
type supervision struct {
	ctl interface {
		Resolve(ctx context.Context, ref string) (task.ID, error)
	}
	w  *supervise.Watcher
	sy *syncer.Syncer
	ex *tasks.Service
	st store.Store
}

// Health implements server.Supervision. A queued task the Watcher has no
// window for (it has not run yet) shows as queued; any other task it does
// not watch (finished, or merging) is "unknown".
func (s supervision) Health(ctx context.Context, ref string) ([]supervise.Health, error) {
	if ref == "" {
		hs := s.w.HealthAll()
		slices.SortFunc(hs, func(a, b supervise.Health) int { return strings.Compare(string(a.TaskID), string(b.TaskID)) })
		return hs, nil
	}
	id, err := s.ctl.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if h, ok := s.w.Health(id); ok {
		return []supervise.Health{h}, nil
	}
	t, err := s.st.GetTask(ctx, id)
	if err != nil {
		return nil, err
	}
	h := supervise.Health{TaskID: id, State: string(t.Status), Status: "unknown", Ladder: "none", Diagnosis: "not watched: the task is " + string(t.Status)}
	if t.Status == task.Queued {
		// Not run yet: its state, not a score.
		h.Status, h.Activity, h.Diagnosis = string(t.Status), "queued", ""
	}
	if t.NoSupervision {
		h.Status, h.Diagnosis = "unsupervised", "created with --no-supervision"
	}
	return []supervise.Health{h}, nil
}

// Diagnoses implements server.Supervision: the newest watcher events.
func (s supervision) Diagnoses(ctx context.Context, ref string, limit int) ([]event.Event, error) {
	if limit <= 0 {
		limit = 50
	}
	q := event.Query{Filter: event.Filter{Kinds: []string{"watcher"}}, Limit: 1000}
	if ref != "" {
		id, err := s.ctl.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		q.TaskID = id
	}
	var out []event.Event
	for {
		page, err := s.st.ReadEvents(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(out) > limit {
			out = out[len(out)-limit:]
		}
		if len(page) < q.Limit {
			return out, nil
		}
		q.AfterID = page[len(page)-1].ID
	}
}

// Stats implements server.Supervision.
func (s supervision) Stats(context.Context) (supervise.Stats, *syncer.Stats, error) {
	var sy *syncer.Stats
	if s.sy != nil {
		st := s.sy.Stats()
		sy = &st
	}
	return s.w.Stats(), sy, nil
}

// Nudge implements server.Supervision: the user's nudge, through the door.
func (s supervision) Nudge(ctx context.Context, ref, text string) (inject.Injection, error) {
	id, err := s.ctl.Resolve(ctx, ref)
	if err != nil {
		return inject.Injection{}, err
	}
	return s.ex.Nudge(ctx, id, text)
}
