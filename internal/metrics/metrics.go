// Package metrics exposes the daemon's state and activity in the
// Prometheus text exposition format (hand-written: no client library, so
// the binary stays small). A Collector reads the state at each scrape from
// the store and the bus (tasks by status, the cost ledger, the merge
// queue, the event log's head, the bus's slowest reader) and counts what
// happens from the bus (injections queued, delivered and returned, the
// Watcher's findings and actions, model retries, merges). Handler serves
// it: on the daemon's Unix socket at GET /metrics, and on the web
// dashboard's listener. docs/metrics.md lists every metric.
package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Store is what a scrape reads, and what Run follows the event log with.
type Store interface {
	// Counts gives tasks by status, the event log's head and the
	// injections waiting.
	Counts(ctx context.Context) (store.Counts, error)
	// Costs gives the cost ledger by model: calls, tokens, dollars.
	Costs(ctx context.Context, q store.CostQuery) ([]store.CostRow, error)
	// ListMerges gives the open entries of the merge queue.
	ListMerges(ctx context.Context, q store.MergeQuery) ([]store.MergeEntry, error)
	// ReadEvents lets Run catch up from the log when it lags.
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
}

// Options wires a Collector.
type Options struct {
	Store Store
	Bus   *event.Bus
	// Version is the daemon's version, for neuraphage_build_info.
	Version string
}

// Collector gathers the metrics. Its counters count the logged events
// after the event log's head at New; Run feeds them. Safe for concurrent
// use.
type Collector struct {
	opts Options
	from int64 // the log's head at New: Run counts the events after it

	mu     sync.Mutex
	counts counters

	// ledgerMu serializes the reads of the cost ledger; ledger holds its
	// running sums by "provider/model" and the last charge ID read, so a
	// scrape reads only the charges added since the one before.
	ledgerMu sync.Mutex
	ledger   map[string]store.CostRow
	lastCost int64
}

// counters are what Run counts from the bus, by label value.
type counters struct {
	seen          int64 // the ID of the newest logged event handled
	queued        map[string]float64
	delivered     map[string]float64
	returned      map[string]float64
	findings      map[string]float64 // watcher.health by status
	actions       map[string]float64 // watcher.nudge|escalate|pause|abort
	evaluations   map[string]float64 // watch.evaluation by decision
	interjections float64
	retries       map[string]float64 // agent.model_retry by class
	merges        map[string]float64 // merge outcomes
}

// New returns a Collector; its counters start at zero with the events
// logged after this call. Call Run to feed them.
func New(opts Options) *Collector {
	c := &Collector{opts: opts, from: opts.Bus.LastID(), ledger: map[string]store.CostRow{}}
	c.counts = counters{
		seen:   c.from,
		queued: map[string]float64{}, delivered: map[string]float64{}, returned: map[string]float64{},
		findings: map[string]float64{}, actions: map[string]float64{}, evaluations: map[string]float64{},
		retries: map[string]float64{}, merges: map[string]float64{},
	}
	return c
}

// Run counts the events logged after New, from the log and then live
// from the bus, without gap or double count (event.Follow), until ctx
// ends; it then returns nil. An error reading the log ends it with that
// error.
func (c *Collector) Run(ctx context.Context) error {
	// Every kind, not only the counted ones: the newest ID handled is then
	// comparable with the log's head (neuraphage_metrics_last_counted_id).
	q := event.Query{AfterID: c.from}
	err := event.Follow(ctx, c.opts.Bus, c.opts.Store, q, func(e event.Event) error {
		c.observe(e)
		return nil
	})
	if ctx.Err() != nil || errors.Is(err, event.ErrClosed) {
		return nil
	}
	return fmt.Errorf("counting events for metrics: %w", err)
}

// observe counts one event.
func (c *Collector) observe(e event.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := &c.counts
	if e.ID > k.seen {
		k.seen = e.ID
	}
	switch p := e.Payload.(type) {
	case event.TaskMessage:
		k.queued[injectionKind(p.Kind)]++
	case event.Delivered:
		for i := range p.InjectionIDs {
			k.delivered[injectionKind(at(p.Kinds, i))]++
		}
	case event.TaskReturned:
		for i := range p.InjectionIDs {
			k.returned[injectionKind(at(p.Kinds, i))]++
		}
	case event.HealthCheck:
		k.findings[or(p.Status, "unknown")]++
	case event.WatcherNudge:
		k.actions["nudge"]++
	case event.WatcherEscalate:
		if p.Refused != "" {
			k.actions["escalate_refused"]++
		} else {
			k.actions["escalate"]++
		}
	case event.WatcherPause:
		k.actions["pause"]++
	case event.WatcherAbort:
		k.actions["abort"]++
	case event.WatchEvaluation:
		k.evaluations[or(p.Decision, "unknown")]++
	case event.WatchInterjected:
		k.interjections++
	case event.ModelRetry:
		k.retries[or(p.Class, "unknown")]++
	case event.MergeLanded:
		k.merges["landed"]++
	case event.MergeConflicted:
		k.merges["conflicted"]++
	case event.MergeGateFailed:
		k.merges["gate_failed"]++
	case event.MergeParked:
		k.merges["parked"]++
	case event.MergeRolledBack:
		k.merges["rolled_back"]++
	case event.PROpened:
		k.merges["pr_opened"]++
	case event.MergeCancelled:
		k.merges["cancelled"]++
	}
}

// injectionKind is the label of an injection kind: "" (a log written
// before kinds) is a message.
func injectionKind(k string) string { return or(k, string(inject.Message)) }

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The metric families, in the order they are written. docs/metrics.md
// describes each.
var (
	famBuild        = family{"neuraphage_build_info", gauge, "The daemon's version; always 1.", []string{"version"}}
	famTasks        = family{"neuraphage_tasks", gauge, "Tasks by status.", []string{"status"}}
	famModelCalls   = family{"neuraphage_model_calls_total", counter, "Model calls in the cost ledger, by provider and model.", []string{"provider", "model"}}
	famTokens       = family{"neuraphage_model_tokens_total", counter, "Tokens in the cost ledger, by provider, model and direction (input, output, cache_read, cache_write).", []string{"provider", "model", "direction"}}
	famCost         = family{"neuraphage_model_cost_usd_total", counter, "Dollars in the cost ledger, by provider and model.", []string{"provider", "model"}}
	famPending      = family{"neuraphage_injections_pending", gauge, "Injections queued for unfinished tasks and not yet delivered.", nil}
	famQueued       = family{"neuraphage_injections_queued_total", counter, "Injections queued since the daemon started, by kind.", []string{"kind"}}
	famDelivered    = family{"neuraphage_injections_delivered_total", counter, "Injections delivered to a task's model since the daemon started, by kind.", []string{"kind"}}
	famReturned     = family{"neuraphage_injections_returned_total", counter, "Injections returned unseen (their task finished) since the daemon started, by kind.", []string{"kind"}}
	famFindings     = family{"neuraphage_watcher_findings_total", counter, "The Watcher's changes of view of a task since the daemon started, by the status found.", []string{"status"}}
	famActions      = family{"neuraphage_watcher_actions_total", counter, "The Watcher's actions on tasks since the daemon started.", []string{"action"}}
	famEvaluations  = family{"neuraphage_watch_evaluations_total", counter, "Watcher sessions' evaluations since the daemon started, by decision.", []string{"decision"}}
	famInterjection = family{"neuraphage_watch_interjections_total", counter, "Watcher sessions' interjections since the daemon started.", nil}
	famRetries      = family{"neuraphage_model_retries_total", counter, "Model calls tried again since the daemon started, by error class.", []string{"class"}}
	famMergeDepth   = family{"neuraphage_merge_queue_depth", gauge, "Open entries of the merge queue, by state.", []string{"state"}}
	famMerges       = family{"neuraphage_merges_total", counter, "Merge queue outcomes since the daemon started.", []string{"outcome"}}
	famLastID       = family{"neuraphage_event_log_last_id", gauge, "The ID of the newest event in the event log.", nil}
	famCountedID    = family{"neuraphage_metrics_last_counted_id", gauge, "The ID of the newest logged event the counters have handled; the event log's last ID minus it is how far they are behind.", nil}
	famBacklog      = family{"neuraphage_bus_backlog_events", gauge, "Events the slowest bus subscriber has queued and not yet read.", nil}
	famSubscribers  = family{"neuraphage_bus_subscribers", gauge, "Subscriptions to the event bus.", nil}
	famPublished    = family{"neuraphage_bus_published_total", counter, "Events published on the bus since the daemon started.", nil}
	famDropped      = family{"neuraphage_bus_dropped_total", counter, "Transient events dropped for slow subscribers since the daemon started.", nil}
	famLagged       = family{"neuraphage_bus_lagged_total", counter, "Subscriptions ended for falling too far behind since the daemon started.", nil}
)

// WriteText reads the store and the bus and writes every metric in the
// text format. It implements Scraper.
func (c *Collector) WriteText(ctx context.Context, b *bytes.Buffer) error {
	counts, err := c.opts.Store.Counts(ctx)
	if err != nil {
		return fmt.Errorf("counting tasks: %w", err)
	}
	costs, err := c.readLedger(ctx)
	if err != nil {
		return err
	}
	open, err := c.opts.Store.ListMerges(ctx, store.MergeQuery{Open: true})
	if err != nil {
		return fmt.Errorf("reading the merge queue: %w", err)
	}
	bus := c.opts.Bus.Stats()

	w := textWriter{b}
	w.head(famBuild)
	w.sample(famBuild, 1, c.opts.Version)

	statuses := map[string]float64{}
	for st, n := range counts.Tasks {
		statuses[string(st)] = float64(n)
	}
	w.table(famTasks, statuses, allStatuses()...)

	writeCosts(w, costs)
	w.one(famPending, float64(counts.Pending))

	depth := map[string]float64{}
	for _, m := range open {
		depth[string(m.State)]++
	}
	w.table(famMergeDepth, depth, string(store.MergeQueued), string(store.MergeRunning), string(store.MergeWaiting))

	c.mu.Lock()
	k := &c.counts
	kinds := injectionKinds()
	w.table(famQueued, k.queued, kinds...)
	w.table(famDelivered, k.delivered, kinds...)
	w.table(famReturned, k.returned, kinds...)
	w.table(famFindings, k.findings, "healthy", "struggling", "stuck", "runaway")
	w.table(famActions, k.actions, "nudge", "escalate", "escalate_refused", "pause", "abort")
	w.table(famEvaluations, k.evaluations, "interject", "continue", "failed")
	w.one(famInterjection, k.interjections)
	w.table(famRetries, k.retries)
	w.table(famMerges, k.merges, "landed", "conflicted", "gate_failed", "parked", "rolled_back", "pr_opened", "cancelled")
	seen := k.seen
	c.mu.Unlock()

	w.one(famLastID, float64(max(counts.LastID, bus.LastID)))
	w.one(famCountedID, float64(seen))
	w.one(famBacklog, float64(bus.Backlog))
	w.one(famSubscribers, float64(bus.Subscribers))
	w.one(famPublished, float64(bus.Published))
	w.one(famDropped, float64(bus.Dropped))
	w.one(famLagged, float64(bus.Lagged))
	return nil
}

// readLedger adds the charges since the last read to the running sums and
// returns them, ordered by key.
func (c *Collector) readLedger(ctx context.Context) ([]store.CostRow, error) {
	c.ledgerMu.Lock()
	defer c.ledgerMu.Unlock()
	rows, err := c.opts.Store.Costs(ctx, store.CostQuery{By: "model", AfterID: c.lastCost})
	if err != nil {
		return nil, fmt.Errorf("reading the cost ledger: %w", err)
	}
	for _, r := range rows {
		sum := c.ledger[r.Key]
		sum.Key = r.Key
		sum.Calls += r.Calls
		sum.InputTokens += r.InputTokens
		sum.OutputTokens += r.OutputTokens
		sum.CacheReadTokens += r.CacheReadTokens
		sum.CacheWriteTokens += r.CacheWriteTokens
		sum.CostUSD += r.CostUSD
		c.ledger[r.Key] = sum
		c.lastCost = max(c.lastCost, r.LastID)
	}
	out := make([]store.CostRow, 0, len(c.ledger))
	for _, r := range c.ledger {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// writeCosts writes the ledger's rows (keyed "provider/model") as the
// model call, token and cost families.
func writeCosts(w textWriter, rows []store.CostRow) {
	type pm struct{ provider, model string }
	keys := make([]pm, len(rows))
	for i, r := range rows {
		p, m, ok := strings.Cut(r.Key, "/")
		if !ok {
			p, m = "", r.Key
		}
		keys[i] = pm{p, m}
	}
	w.head(famModelCalls)
	for i, r := range rows {
		w.sample(famModelCalls, float64(r.Calls), keys[i].provider, keys[i].model)
	}
	w.head(famTokens)
	for i, r := range rows {
		for _, d := range []struct {
			dir string
			n   int64
		}{{"input", r.InputTokens}, {"output", r.OutputTokens}, {"cache_read", r.CacheReadTokens}, {"cache_write", r.CacheWriteTokens}} {
			w.sample(famTokens, float64(d.n), keys[i].provider, keys[i].model, d.dir)
		}
	}
	w.head(famCost)
	for i, r := range rows {
		w.sample(famCost, r.CostUSD, keys[i].provider, keys[i].model)
	}
}

func allStatuses() []string {
	var out []string
	for _, st := range task.AllStatuses() {
		out = append(out, string(st))
	}
	return out
}

func injectionKinds() []string {
	var out []string
	for _, k := range inject.Kinds() {
		out = append(out, string(k))
	}
	return out
}
