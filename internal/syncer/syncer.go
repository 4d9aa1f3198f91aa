// Package syncer is the Syncer: it follows every running task's
// observations on the event bus, extracts what a task learns (its
// record_learning calls, an error it resolved, a search it answered, its
// own statements, and optionally a turn-end model pass; internal/knowledge),
// keeps it in the knowledge store (deduplicated, searchable, durable), and
// relays each learning, now, to the other running tasks it concerns.
//
// Recipients are the other running tasks that pass the configured
// relationships (same parent, shared tags, same files, same group) and a
// deterministic relevance score; the syncer persona decides who, how
// urgent and what to say, and the deterministic rules decide when it
// fails. Per-urgency thresholds, a per-task rate limit and cooldown, and a
// unique (learning, task) pair in the store keep it from flooding a task,
// sending a learning twice or back to its source. Messages go through the
// executor's one door (<sync-message from="t-…" urgency="…">, escaped);
// several to one task arrive together, the most urgent first; a blocking
// one interrupts the turn in flight. New tasks start informed: Brief puts
// the most relevant learnings into their first context.
//
// One goroutine (the loop) owns the per-task state; model calls run in
// goroutines the loop owns and joins. A panic while handling one event is
// recovered and counted; the loop goes on.
package syncer

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Policy says which candidates may hear a learning of one urgency.
type Policy string

// The policies: any candidate relevant enough; only related ones; only
// subtasks of the source's parent; nobody.
const (
	Always     Policy = "always"
	Related    Policy = "related"
	SameParent Policy = "same-parent"
	Never      Policy = "never"
)

// The urgencies of a sync message, most urgent first: the names of the
// injection's urgencies (a held message keeps its urgency by name; it
// becomes an inject.Urgency at the door).
const (
	Blocking = string(inject.Blocking)
	Helpful  = string(inject.Helpful)
	FYI      = string(inject.FYI)
)

// Urgencies lists the urgencies, most urgent first.
var urgencies = [...]string{Blocking, Helpful, FYI}

func urgencyRank(u string) int {
	for i, x := range urgencies {
		if x == u {
			return i
		}
	}
	return len(urgencies)
}

// Config is the Syncer's configuration (config.Syncer, converted).
type Config struct {
	Enabled  bool
	Interval time.Duration
	// The relationships that make a candidate related to a learning's
	// source.
	SameParent, SharedTags, SameFiles, SameGroup bool
	// Relay is the policy per urgency.
	Relay        map[string]Policy
	MinRelevance float64
	MaxPerMinute int
	Cooldown     time.Duration
	MaxPending   int
	PendingTTL   time.Duration
	Extract      knowledge.ExtractConfig
	LLMExtract   bool
	Similarity   float64
	Brief        int
	MaxMessage   int
}

// Actions is the executor's door.
type Actions interface {
	Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error)
}

// Store is what the Syncer reads of tasks and of the event log, and the
// events it records.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, o store.ListOptions) ([]task.Task, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
}

// Knowledge is where the Syncer keeps the learnings it relays and the
// messages that carried them.
type Knowledge interface {
	RecordLearning(ctx context.Context, l store.Learning, record func(store.Learning) []event.Event) (store.Learning, []event.Event, error)
	Learnings(ctx context.Context, q store.LearningQuery) ([]store.Learning, error)
	GetLearning(ctx context.Context, id int64) (store.Learning, error)
	store.SyncMessageLog
}

// Options configure a Syncer.
type Options struct {
	Config Config
	// Store and Knowledge are the store (two roles of it).
	Store     Store
	Knowledge Knowledge
	Bus       *event.Bus
	Actions   Actions
	// Decider is the syncer persona; nil decides by the rules alone.
	Decider Decider
	// Extractor is the turn-end model pass; nil (or Config.LLMExtract
	// off) skips it.
	Extractor ModelExtractor
	Hooks     *hooks.Runner
	Logger    *slog.Logger
	Now       func() time.Time
}

// Syncer relays learnings between running tasks. Its methods are safe for
// concurrent use; Run owns its goroutines and joins them before it
// returns.
type Syncer struct {
	o   Options
	cfg Config
	log *slog.Logger

	// Owned by the loop.
	members    map[task.ID]*member
	x          *knowledge.Extractor
	recentList []*recentLearning
	inflight   map[task.ID]bool // tasks whose turn-end model pass runs
	// latency is, per held message, the time from its learning's
	// observation to its creation (ms), reported when it is queued.
	latency map[int64]int64

	// rt runs the loop: its restarts, its place on the bus, the model
	// calls in flight.
	rt        *supervisor.Runtime
	deg       *supervisor.Degraded // the persona failing: the rules decide
	decisions chan struct{}        // a semaphore: the persona calls in flight

	mu sync.Mutex
	// st holds the Syncer's own counters (guarded by mu); Stats adds the
	// runtime's and the degraded state.
	st Stats
}

// member is what the Syncer knows of a running task.
type member struct {
	t       task.Task
	running bool
	files   map[string]bool // worktree-relative paths it changed
	focus   string          // its last tool call
	// Delivery pacing: when its recent sync messages were queued, and
	// when the last batch was.
	sent     []time.Time
	lastSent time.Time
	// held counts its messages waiting for the rate limit or cooldown.
	held int
	// terms caches the content terms of its description, tags, focus and
	// files for scoring; nil when one of them changed.
	terms []string
}

// recentLearning is a learning the sweep offers to tasks that joined
// after it was evaluated.
type recentLearning struct {
	id        int64
	at        time.Time // observed
	evaluated time.Time // last evaluated
	offered   map[task.ID]bool
}

// New returns a Syncer.
func New(o Options) *Syncer {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &o.Config
	if c.Interval <= 0 {
		c.Interval = 15 * time.Second
	}
	c.MaxPerMinute = max(c.MaxPerMinute, 1)
	c.MaxPending = max(c.MaxPending, 1)
	if c.PendingTTL <= 0 {
		c.PendingTTL = 10 * time.Minute
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = 600
	}
	if c.Relay == nil {
		c.Relay = map[string]Policy{Blocking: Always, Helpful: Related, FYI: SameParent}
	}
	log := o.Logger.With("component", "syncer")
	s := &Syncer{o: o, cfg: o.Config, log: log,
		members: map[task.ID]*member{}, x: knowledge.NewExtractor(o.Config.Extract), inflight: map[task.ID]bool{}, latency: map[int64]int64{},
		rt: supervisor.New(supervisor.Options{Name: "the syncer", Logger: log, Now: o.Now}), deg: supervisor.NewDegraded(o.Now),
		decisions: make(chan struct{}, maxDecisions)}
	s.st.Enabled = c.Enabled
	s.st.Learnings, s.st.Ignored = map[string]uint64{}, map[string]uint64{}
	return s
}

// Stats returns the Syncer's counters.
func (s *Syncer) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Learnings, st.Ignored = maps.Clone(s.st.Learnings), maps.Clone(s.st.Ignored)
	rs, d := s.rt.Stats(), s.deg.State()
	st.Running, st.Restarts, st.Panics = rs.Running, rs.Restarts, rs.Panics
	st.Degraded, st.DegradedReason, st.PersonaFailures = d.On, d.Reason, d.Failures
	return st
}

func (s *Syncer) count(fn func(st *Stats)) {
	s.mu.Lock()
	fn(&s.st)
	s.mu.Unlock()
}

// Run relays until ctx ends. A panic in the loop itself is recovered,
// counted and the loop restarted; it returns nil when ctx ends, after the
// model calls in flight are done.
func (s *Syncer) Run(ctx context.Context) error {
	if !s.cfg.Enabled {
		<-ctx.Done()
		return nil
	}
	return s.rt.Run(ctx, s.loop)
}

// loop follows the bus and the clock until ctx ends. After a restart of
// the loop it goes on from the last event handled.
func (s *Syncer) loop(ctx context.Context) {
	evs, stop := s.rt.Follow(ctx, s.o.Bus, s.o.Store, event.Filter{Kinds: []string{"agent", string(event.KindTaskStatus)}})
	defer stop()
	s.adoptRunning(ctx)
	s.reconcile(ctx, s.o.Now()) // messages held before a restart
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-evs:
			if !ok {
				return
			}
			s.safely(func() { s.observe(ctx, e) })
			s.rt.Handled(e)
		case fn := <-s.rt.Results():
			s.safely(func() { fn(ctx) })
		case now := <-tick.C:
			s.safely(func() { s.sweep(ctx, now) })
		}
	}
}

// safely runs fn, recovering and counting a panic.
func (s *Syncer) safely(fn func()) {
	s.rt.Safely(fn, "the syncer panicked handling an event; going on")
}

// adoptRunning adds every task running now (a restarted Syncer, or tasks
// that started before it).
func (s *Syncer) adoptRunning(ctx context.Context) {
	ts, err := s.o.Store.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Running}})
	if err != nil {
		s.log.Warn("listing running tasks", "err", err)
		return
	}
	for _, t := range ts {
		if s.members[t.ID] == nil {
			s.members[t.ID] = newMember(t)
		}
	}
}

func newMember(t task.Task) *member {
	return &member{t: t, running: t.Status == task.Running, files: map[string]bool{}}
}

// observe handles one event of the bus.
func (s *Syncer) observe(ctx context.Context, e event.Event) {
	if e.TaskID == "" {
		return
	}
	s.count(func(st *Stats) { st.Observations++ })
	m := s.members[e.TaskID]
	if ts, ok := e.Payload.(event.TaskStatus); ok {
		s.onStatus(ctx, e.TaskID, m, ts)
		return
	}
	if m == nil {
		t, err := s.o.Store.GetTask(ctx, e.TaskID)
		if err != nil || t.Status.Terminal() {
			return
		}
		m = newMember(t)
		m.running = true
		m.held = s.heldOf(ctx, e.TaskID)
		s.members[e.TaskID] = m
	}
	switch p := e.Payload.(type) {
	case event.ToolCall:
		m.focus, m.terms = focusOf(p), nil
	case event.FileChanged:
		if len(m.files) < maxFiles && !m.files[p.Path] {
			m.files[p.Path], m.terms = true, nil
		}
	case event.Delivered:
		s.onDelivered(ctx, e, p)
	case event.TurnEnded:
		if s.cfg.LLMExtract && s.o.Extractor != nil && !s.inflight[e.TaskID] {
			s.extractTurn(ctx, e.TaskID, p.Turn)
		}
	}
	for _, c := range s.x.Observe(string(e.TaskID), e.Payload) {
		s.learned(ctx, e, c)
	}
}

// maxFiles bounds the files remembered per task.
const maxFiles = 500

func (s *Syncer) onStatus(ctx context.Context, id task.ID, m *member, ts event.TaskStatus) {
	switch {
	case ts.To.Terminal():
		s.dropHeld(ctx, id, "recipient-finished", "the task "+string(ts.To))
		delete(s.members, id)
		s.x.Forget(string(id))
	case ts.To == task.Running:
		t, err := s.o.Store.GetTask(ctx, id)
		if err != nil {
			return
		}
		if m == nil {
			m = newMember(t)
			m.held = s.heldOf(ctx, id)
			s.members[id] = m
		}
		m.t, m.running, m.terms = t, true, nil
		if m.held > 0 {
			s.dispatch(ctx, id, s.o.Now())
		}
	default:
		if m != nil {
			m.running = false
		}
	}
}

// remember notes a learning for the sweep's late joiners.
func (s *Syncer) remember(id int64, observed time.Time) {
	now := s.o.Now()
	if r := s.recent(id); r != nil {
		r.evaluated = now
		return
	}
	s.recentList = append(s.recentList, &recentLearning{id: id, at: observed, evaluated: now, offered: map[task.ID]bool{}})
	if len(s.recentList) > maxRecent {
		s.recentList = s.recentList[len(s.recentList)-maxRecent:]
	}
}

// maxRecent bounds the learnings the sweep offers again.
const maxRecent = 200

func (s *Syncer) recent(id int64) *recentLearning {
	for _, r := range s.recentList {
		if r.id == id {
			return r
		}
	}
	return nil
}
