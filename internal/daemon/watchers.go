package daemon

import (
	"context"
	"log/slog"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
	"github.com/neuraphage/neuraphage-go/internal/watchers"
)

// newWatchers builds the watcher sessions' service: their roles from the
// persona set, their models from the tiers (the same clients, and so the
// same per-provider limits, as the tasks' own calls), their interjections
// through the tasks service.
func newWatchers(cfg config.Sessions, set *persona.Set, models func(llm.Tier) (llm.Client, string, error),
	st store.Store, bus *event.Bus, svc *tasks.Service, log *slog.Logger) *watchers.Service {
	// The loop follows the log from here: the API serves before the loop
	// has subscribed, and what it accepts meanwhile must reach it.
	after, err := st.LastEventID(context.Background())
	if err != nil {
		log.Warn("reading the event log's position; watcher sessions start live", "err", err)
	}
	return watchers.New(watchers.Options{After: after,
		Config: watchers.Config{Enabled: cfg.Enabled, Settle: cfg.Settle(), MinInterval: cfg.MinInterval(),
			Timeout: cfg.EvaluateTimeout(), MaxTokens: cfg.MaxTokens},
		Store: st, Sessions: st, Bus: bus, Actions: svc, Models: models, Roles: set, Logger: log,
	})
}
