package daemon

import (
	"context"
	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/overlap"
	"log/slog"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

// newSyncer builds the Syncer from the configuration: the syncer persona
// decides who hears a learning when it is enabled and asked for (else the
// rules do), and the turn-end model pass runs on the router tier when
// llm_extract is on.
func newSyncer(cfg config.Syncer, set *persona.Set, models func(llm.Tier) (llm.Client, string, error),
	st store.Store, bus *event.Bus, ex *tasks.Service, hs *hooks.Runner, log *slog.Logger) *syncer.Syncer {
	var (
		s       *syncer.Syncer
		decider syncer.Decider
		pass    syncer.ModelExtractor
	)
	spent := func(u llm.Usage, usd float64) { s.Spent(u, usd) }
	if p, ok := set.Get("syncer"); ok && p.Enabled && cfg.Persona {
		decider = syncer.ModelDecider{Model: func() (llm.Client, string, error) { return models(p.Tier) },
			System: p.SystemPrompt, Timeout: cfg.PersonaTimeout(), MaxMessage: cfg.MaxMessageChars, Spent: spent}
	}
	if cfg.LLMExtract {
		pass = syncer.ModelPass{Model: func() (llm.Client, string, error) { return models(llm.TierRouter) },
			Timeout: cfg.PersonaTimeout(), Spent: spent}
	}
	s = syncer.New(syncer.Options{
		Config: syncer.Config{
			Enabled: cfg.Enabled, Interval: cfg.Interval(),
			SameParent: cfg.SameParent, SharedTags: cfg.SharedTags, SameFiles: cfg.SameFiles, SameGroup: cfg.SameGroup,
			Relay: map[string]syncer.Policy{syncer.Blocking: syncer.Policy(cfg.RelayBlocking),
				syncer.Helpful: syncer.Policy(cfg.RelayHelpful), syncer.FYI: syncer.Policy(cfg.RelayFYI)},
			MinRelevance: cfg.MinRelevance, MaxPerMinute: cfg.MaxPerMinute, Cooldown: cfg.Cooldown(),
			MaxPending: cfg.MaxPending, PendingTTL: cfg.PendingTTL(),
			Extract:    knowledge.ExtractConfig{Errors: cfg.ExtractErrors, Discoveries: cfg.ExtractDiscoveries, Statements: cfg.ExtractStatements},
			LLMExtract: cfg.LLMExtract, Similarity: cfg.DedupSimilarity, Brief: cfg.Brief, MaxMessage: cfg.MaxMessageChars,
		},
		Store: st, Knowledge: st, Bus: bus, Actions: ex, Decider: decider, Extractor: pass, Hooks: hs, Logger: log,
	})
	return s
}

// knowledgeAPI serves the knowledge store and the Syncer's messages.
type knowledgeAPI struct {
	ctl interface {
		Resolve(ctx context.Context, ref string) (task.ID, error)
	}
	st store.Store
}

// Learnings implements server.Knowledge.
func (k knowledgeAPI) Learnings(ctx context.Context, search, ref string, limit int) ([]store.Learning, error) {
	q := store.LearningQuery{Search: search, Limit: limit}
	if ref != "" {
		id, err := k.ctl.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		q.TaskID = id
	}
	return k.st.Learnings(ctx, q)
}

// Learning implements server.Knowledge: one learning with the messages
// that relayed it.
func (k knowledgeAPI) Learning(ctx context.Context, id int64) (store.Learning, []store.SyncMessage, error) {
	l, err := k.st.GetLearning(ctx, id)
	if err != nil {
		return store.Learning{}, nil, err
	}
	ms, err := k.st.SyncMessages(ctx, store.SyncQuery{LearningID: id})
	if err != nil {
		return store.Learning{}, nil, err
	}
	return l, ms, nil
}

// Forget implements server.Knowledge.
func (k knowledgeAPI) Forget(ctx context.Context, id int64) (store.Learning, error) {
	l, _, err := k.st.ForgetLearning(ctx, id, func(l store.Learning) []event.Event {
		return []event.Event{event.New(time.Now().UTC(), l.TaskID, event.KnowledgeForgot{LearningID: l.ID, Summary: l.Summary})}
	})
	return l, err
}

// SyncMessages implements server.Knowledge: the newest messages to one
// task (ref) or to all, oldest first.
func (k knowledgeAPI) SyncMessages(ctx context.Context, ref string, limit int) ([]store.SyncMessage, error) {
	if limit <= 0 {
		limit = 50
	}
	q := store.SyncQuery{Limit: limit, Newest: true}
	if ref != "" {
		id, err := k.ctl.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		q.TaskID = id
	}
	ms, err := k.st.SyncMessages(ctx, q)
	if err != nil {
		return nil, err
	}
	slices.Reverse(ms)
	return ms, nil
}

// overlapAPI serves the overlap radar's matrix (server.Overlap).
type overlapAPI struct{ r *overlap.Radar }

// Overlap implements server.Overlap.
func (o overlapAPI) Overlap(id task.ID) []api.OverlapPair {
	ps := o.r.Matrix(id)
	out := make([]api.OverlapPair, len(ps))
	for i, p := range ps {
		out[i] = api.OverlapPair{A: string(p.A), B: string(p.B), Files: p.Files, Forecast: p.Forecast, Conflicts: p.Conflicts}
		for _, l := range p.Lines {
			out[i].Lines = append(out[i].Lines, api.OverlapLines{File: l.File, A: apiRanges(l.A), B: apiRanges(l.B), Intersect: l.Intersect})
		}
	}
	return out
}

func apiRanges(rs []overlap.Range) []api.LineRange {
	out := make([]api.LineRange, len(rs))
	for i, r := range rs {
		out[i] = api.LineRange{From: r.From, To: r.To}
	}
	return out
}
