// Package watchers runs watcher sessions: reviewers with a brief (security,
// tests, scope, or the user's own) and an authority (peer or supervisor)
// that follow one task, the tasks with given tags, or every task, and
// interject on their own when what they see matters.
//
// One loop on the supervisor runtime owns every session's state. It
// follows the bus (never polls, needs no client attached), adds each
// watched task's activity to the session's buffer (internal/interject)
// and evaluates at natural breakpoints: the task's turn end, a tool result
// after which files changed, or a settle time after activity began without
// either. A session has at most one evaluation in flight and a least
// interval between two (its rate limit); breakpoints that arrive meanwhile
// coalesce into the next evaluation. Evaluations run as jobs the runtime
// owns and joins: the model call on the session's tier (the shared
// per-provider limiter of the task's own calls), the reply parsed, an
// interjection sent through the one injection door (tasks.Service.Inject;
// urgent ones interrupt the turn in flight), the evaluation recorded and
// charged to the session. A session past its budget pauses itself; a
// session on one task ends when the task finishes.
//
// Adding, pausing, resuming and removing sessions (Service methods, for
// the API) write the store with a watch.session event; the loop learns of
// every change from the bus, so the store is the one truth.
package watchers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/interject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Config is how sessions run (config.Sessions, converted).
type Config struct {
	Enabled bool
	// Settle is the time after activity began at which it is evaluated
	// when no breakpoint came.
	Settle time.Duration
	// MinInterval is the least time between two evaluations of a session.
	MinInterval time.Duration
	// Timeout bounds one evaluation's model call.
	Timeout   time.Duration
	MaxTokens int
}

// Store is what the service reads of tasks and of the event log.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
}

// Sessions is where sessions and their evaluations are kept.
type Sessions interface {
	store.WatchSessions
	store.WatchLog
}

// Actions is the one injection door (the tasks service).
type Actions interface {
	Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error)
	Resolve(ctx context.Context, ref string) (task.ID, error)
}

// Models returns the client and model of a tier.
type Models func(t llm.Tier) (llm.Client, string, error)

// Options configure a Service.
type Options struct {
	Config   Config
	Store    Store
	Sessions Sessions
	Bus      *event.Bus
	Actions  Actions
	Models   Models
	// Roles are the watcher roles (built-in and personas.yaml).
	Roles  *persona.Set
	Logger *slog.Logger
	// After is the event log's last ID when the daemon started, before it
	// served anything (0: an empty log): the loop's first feed starts after
	// it, so that nothing a client did before the loop began is missed.
	After int64
	// Now and Rand are the clock of records and the source of session ids
	// (time.Now and crypto/rand.Reader when nil).
	Now  func() time.Time
	Rand io.Reader
}

// Service runs watcher sessions and changes them for the API. Its methods
// are safe for concurrent use; Run owns its goroutines and joins them.
type Service struct {
	o   Options
	log *slog.Logger
	rt  *supervisor.Runtime

	mu sync.Mutex
	st Stats // guarded by mu
}

// Stats are the service's counters.
type Stats struct {
	Running       bool   `json:"running"`
	Evaluations   uint64 `json:"evaluations"`
	Interjections uint64 `json:"interjections"`
	Urgent        uint64 `json:"urgent"`
	Failures      uint64 `json:"failures"`
	Coalesced     uint64 `json:"coalesced"`
}

// New returns a Service.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Roles == nil {
		o.Roles = persona.Defaults()
	}
	if o.Config.MaxTokens <= 0 {
		o.Config.MaxTokens = 800
	}
	if o.Config.Settle <= 0 {
		o.Config.Settle = 20 * time.Second
	}
	log := o.Logger.With("component", "watchers")
	return &Service{o: o, log: log, rt: supervisor.New(supervisor.Options{Name: "the watcher sessions", Logger: log})}
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Running = s.rt.Stats().Running
	return st
}

func (s *Service) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.st)
	s.mu.Unlock()
}

// Spec is a session to add.
type Spec struct {
	// Task, Tags or All: what it watches (exactly one). Task is a
	// reference the service resolves.
	Task string
	Tags []string
	All  bool
	// Role names a watcher role, or Brief is the user's own text (exactly
	// one).
	Role  string
	Brief string
	// Authority (peer, supervisor) and Tier override the role's; "" keeps
	// it (peer and the router tier for a brief).
	Authority string
	Tier      string
	BudgetUSD float64
}

// Add creates a session.
func (s *Service) Add(ctx context.Context, sp Spec) (store.WatchSession, error) {
	now := s.o.Now().UTC()
	ws := store.WatchSession{Status: store.WatchActive, BudgetUSD: sp.BudgetUSD, CreatedAt: now, UpdatedAt: now, Authority: "peer", Tier: string(llm.TierRouter)}
	targets := 0
	if strings.TrimSpace(sp.Task) != "" {
		targets++
	}
	if len(sp.Tags) > 0 {
		targets++
	}
	if sp.All {
		targets++
	}
	if targets != 1 {
		return ws, &task.InvalidError{Field: "target", Msg: "name exactly one of a task, --tags or --all"}
	}
	switch {
	case sp.Role != "" && sp.Brief != "":
		return ws, &task.InvalidError{Field: "brief", Msg: "give a role or a brief, not both"}
	case sp.Role != "":
		if err := s.CheckRole(sp.Role); err != nil {
			return ws, err
		}
		r, _ := s.o.Roles.WatcherRole(sp.Role)
		ws.Role, ws.Title, ws.Brief, ws.Authority, ws.Tier = r.Key, r.Name, r.Brief, r.Authority, r.Tier
	case strings.TrimSpace(sp.Brief) != "":
		ws.Brief, ws.Title = strings.TrimSpace(sp.Brief), "Watcher"
	default:
		return ws, &task.InvalidError{Field: "brief", Msg: "say what to watch for: a role or a brief"}
	}
	if sp.Authority != "" {
		a, ok := interject.ParseAuthority(sp.Authority)
		if !ok {
			return ws, &task.InvalidError{Field: "authority", Msg: fmt.Sprintf("%q is not an authority; want peer or supervisor", sp.Authority)}
		}
		ws.Authority = string(a)
	}
	if sp.Tier != "" {
		ws.Tier = sp.Tier
	}
	if !validTier(ws.Tier) {
		return ws, &task.InvalidError{Field: "tier", Msg: fmt.Sprintf("%q is not a model tier; want router, worker or expert", ws.Tier)}
	}
	if sp.BudgetUSD < 0 {
		return ws, &task.InvalidError{Field: "budget", Msg: "must not be negative"}
	}
	switch {
	case sp.Task != "":
		id, err := s.o.Actions.Resolve(ctx, sp.Task)
		if err != nil {
			return ws, err
		}
		t, err := s.o.Store.GetTask(ctx, id)
		if err != nil {
			return ws, err
		}
		if t.Status.Terminal() {
			return ws, &task.InvalidError{Field: "task", Msg: fmt.Sprintf("task %s is %s: there is nothing left to watch", id, t.Status)}
		}
		ws.Target.TaskID = id
	case len(sp.Tags) > 0:
		for _, tg := range sp.Tags {
			if tg = strings.TrimSpace(tg); tg != "" {
				ws.Target.Tags = append(ws.Target.Tags, tg)
			}
		}
		if len(ws.Target.Tags) == 0 {
			return ws, &task.InvalidError{Field: "tags", Msg: "name at least one tag"}
		}
	default:
		ws.Target.All = true
	}
	base := ws.Role
	if base == "" {
		base = "watcher"
	}
	// The name is the base, or base-N with the least N free; the store
	// refuses a name taken meanwhile, and the next try looks again.
	for attempt := 0; ; attempt++ {
		all, err := s.o.Sessions.ListWatchSessions(ctx)
		if err != nil {
			return ws, err
		}
		taken := make(map[string]bool, len(all))
		for _, x := range all {
			taken[x.Name] = true
		}
		ws.Name = base
		for n := 2; taken[ws.Name]; n++ {
			ws.Name = fmt.Sprintf("%s-%d", base, n)
		}
		if ws.ID, err = s.newID(); err != nil {
			return ws, err
		}
		_, err = s.o.Sessions.CreateWatchSession(ctx, ws, s.sessionEvent(ws, "added", now))
		if err == nil {
			return ws, nil
		}
		if !errors.Is(err, store.ErrExists) || attempt >= 10 {
			return ws, err
		}
	}
}

func validTier(t string) bool {
	for _, x := range llm.Tiers() {
		if string(x) == t {
			return true
		}
	}
	return false
}

func (s *Service) newID() (string, error) {
	var b [3]byte
	if _, err := io.ReadFull(s.o.Rand, b[:]); err != nil {
		return "", fmt.Errorf("making a session id: %w", err)
	}
	return "w-" + hex.EncodeToString(b[:]), nil
}

func (s *Service) sessionEvent(ws store.WatchSession, action string, now time.Time) event.Event {
	return event.New(now, ws.Target.TaskID, event.WatchSession{Session: ws.ID, Name: ws.Name, Action: action, Status: string(ws.Status), Reason: ws.Reason})
}

// CheckRole refuses a role that is not an enabled watcher role.
func (s *Service) CheckRole(role string) error {
	if _, ok := s.o.Roles.WatcherRole(role); ok {
		return nil
	}
	var keys []string
	for _, r := range s.o.Roles.WatcherRoles() {
		keys = append(keys, r.Key)
	}
	return &task.InvalidError{Field: "role", Msg: fmt.Sprintf("%q is not a watcher role; want one of %s (or add it to personas.yaml under watchers:)", role, strings.Join(keys, ", "))}
}

// List returns every session, oldest first.
func (s *Service) List(ctx context.Context) ([]store.WatchSession, error) {
	return s.o.Sessions.ListWatchSessions(ctx)
}

// Get returns the session ref names (its name, id or id prefix).
func (s *Service) Get(ctx context.Context, ref string) (store.WatchSession, error) {
	id, err := s.o.Sessions.ResolveWatchSession(ctx, ref)
	if err != nil {
		return store.WatchSession{}, err
	}
	return s.o.Sessions.GetWatchSession(ctx, id)
}

// Log returns the session's evaluations after the one numbered after, the
// newest limit of them (0: all), oldest first.
func (s *Service) Log(ctx context.Context, ref string, after int64, limit int) (store.WatchSession, []store.WatchEvaluation, error) {
	ws, err := s.Get(ctx, ref)
	if err != nil {
		return ws, nil, err
	}
	evs, err := s.o.Sessions.WatchEvaluations(ctx, store.WatchQuery{SessionID: ws.ID, AfterID: after, Limit: limit})
	return ws, evs, err
}

// Pause stops a session evaluating; it keeps its place.
func (s *Service) Pause(ctx context.Context, ref, reason string) (store.WatchSession, error) {
	return s.change(ctx, ref, "paused", func(ws *store.WatchSession) error {
		if ws.Status == store.WatchEnded {
			return &task.InvalidError{Field: "watcher", Msg: fmt.Sprintf("session %s has ended (%s)", ws.Name, ws.Reason)}
		}
		ws.Status, ws.Reason = store.WatchPaused, reason
		return nil
	})
}

// Resume starts a paused session again.
func (s *Service) Resume(ctx context.Context, ref string) (store.WatchSession, error) {
	return s.change(ctx, ref, "resumed", func(ws *store.WatchSession) error {
		if ws.Status == store.WatchEnded {
			return &task.InvalidError{Field: "watcher", Msg: fmt.Sprintf("session %s has ended (%s); add a new one", ws.Name, ws.Reason)}
		}
		if ws.BudgetUSD > 0 && ws.SpentUSD >= ws.BudgetUSD {
			return &task.InvalidError{Field: "watcher", Msg: fmt.Sprintf("session %s has spent its budget ($%.4f of $%.4f)", ws.Name, ws.SpentUSD, ws.BudgetUSD)}
		}
		ws.Status, ws.Reason = store.WatchActive, ""
		return nil
	})
}

// Remove ends a session; its evaluations stay, as history.
func (s *Service) Remove(ctx context.Context, ref string) (store.WatchSession, error) {
	return s.change(ctx, ref, "removed", func(ws *store.WatchSession) error {
		ws.Status, ws.Reason = store.WatchEnded, "removed"
		return nil
	})
}

func (s *Service) change(ctx context.Context, ref, action string, f func(*store.WatchSession) error) (store.WatchSession, error) {
	id, err := s.o.Sessions.ResolveWatchSession(ctx, ref)
	if err != nil {
		return store.WatchSession{}, err
	}
	return s.update(ctx, id, action, f)
}

func (s *Service) update(ctx context.Context, id, action string, f func(*store.WatchSession) error) (store.WatchSession, error) {
	now := s.o.Now().UTC()
	ws, _, err := s.o.Sessions.UpdateWatchSession(ctx, id, func(ws *store.WatchSession) ([]event.Event, error) {
		if err := f(ws); err != nil {
			return nil, err
		}
		ws.UpdatedAt = now
		return []event.Event{s.sessionEvent(*ws, action, now)}, nil
	})
	return ws, err
}
