package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
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
func (k knowledgeAPI) Learnings(ctx context.Context, search, ref string, limit int) ([]api.Learning, error) {
	q := store.LearningQuery{Search: search, Limit: limit}
	if ref != "" {
		id, err := k.ctl.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		q.TaskID = id
	}
	ls, err := k.st.Learnings(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]api.Learning, len(ls))
	for i, l := range ls {
		out[i] = apiLearning(l)
	}
	return out, nil
}

// Learning implements server.Knowledge: one learning with the messages
// that relayed it.
func (k knowledgeAPI) Learning(ctx context.Context, id int64) (api.Learning, error) {
	l, err := k.st.GetLearning(ctx, id)
	if err != nil {
		return api.Learning{}, err
	}
	out := apiLearning(l)
	ms, err := k.st.SyncMessages(ctx, store.SyncQuery{LearningID: id})
	if err != nil {
		return api.Learning{}, err
	}
	for _, m := range ms {
		out.Relayed = append(out.Relayed, apiSync(m))
	}
	return out, nil
}

// Forget implements server.Knowledge.
func (k knowledgeAPI) Forget(ctx context.Context, id int64) (api.Learning, error) {
	l, _, err := k.st.ForgetLearning(ctx, id, func(l store.Learning) []event.Event {
		return []event.Event{event.New(time.Now().UTC(), l.TaskID, event.KnowledgeForgot{LearningID: l.ID, Summary: l.Summary})}
	})
	if err != nil {
		return api.Learning{}, err
	}
	return apiLearning(l), nil
}

// SyncMessages implements server.Knowledge: the newest messages to one
// task (ref) or to all, oldest first.
func (k knowledgeAPI) SyncMessages(ctx context.Context, ref string, limit int) ([]api.SyncMessage, error) {
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
	out := make([]api.SyncMessage, len(ms))
	for i, m := range ms {
		out[len(ms)-1-i] = apiSync(m)
	}
	return out, nil
}

func apiLearning(l store.Learning) api.Learning {
	out := api.Learning{ID: l.ID, Kind: l.Kind, Summary: l.Summary, Detail: l.Detail, Tags: l.Tags, Files: l.Files,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, Sources: []api.LearningSource{}}
	for _, s := range l.Sources {
		out.Sources = append(out.Sources, api.LearningSource{TaskID: s.TaskID, Kind: s.Kind, At: s.At})
	}
	return out
}

func apiSync(m store.SyncMessage) api.SyncMessage {
	return api.SyncMessage{ID: m.ID, LearningID: m.LearningID, From: m.From, To: m.TaskID, Urgency: m.Urgency,
		Relevance: m.Relevance, Score: m.Score, Message: m.Message, Reason: m.Reason, DecidedBy: m.DecidedBy,
		State: string(m.State), Note: m.Note, InjectionID: m.InjectionID, CreatedAt: m.CreatedAt,
		QueuedAt: m.QueuedAt, DeliveredAt: m.DeliveredAt}
}
