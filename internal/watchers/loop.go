package watchers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/interject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// kinds are the events the loop follows.
var kinds = []string{
	string(event.KindWatchSession), string(event.KindTaskCreated), string(event.KindTaskStatus), string(event.KindTaskMessage),
	string(event.KindText), string(event.KindToolCall), string(event.KindToolResult), string(event.KindFileChanged),
	string(event.KindTurnEnded), string(event.KindNeedsInput), string(event.KindCompleted), string(event.KindDelivered),
}

// sessionSource is how the source of a session's interjection starts.
var sessionSource = string(inject.FromSession(""))

// seedEvents bounds the task's past activity a session on one task starts
// with (it may be added after the task began).
const (
	seedEvents = 500
	seedWindow = 10 * time.Minute
)

// loop is the state the loop goroutine owns.
type loop struct {
	s        *Service
	sessions map[string]*session
	tasks    map[task.ID]*taskInfo
	// sent maps an interjection's injection id to its session, from its
	// task.message event to its delivery receipt (entries of tasks that
	// end first go with the task).
	sent  map[int64]sentInfo
	timer *time.Timer
	next  time.Time // when the timer fires; zero: stopped
	// ctx is the loop's: evaluations run under it and end with it.
	ctx context.Context
	// ready holds the sessions with due activity to start once the feed
	// has no more events waiting: a burst (a tool's result and its file
	// changes, several tasks' turn ends) is evaluated together.
	ready map[*session]bool
}

type sentInfo struct {
	session string
	task    task.ID
	queued  time.Time
}

type session struct {
	ws        store.WatchSession
	watches   map[task.ID]*watch
	inflight  bool
	lastStart time.Time
	// queue holds the tasks whose activity is due, in the order it became
	// due; each evaluation takes the first.
	queue []task.ID
}

type watch struct {
	buf   interject.Buffer
	first time.Time // the first observation not yet evaluated
	bpAt  time.Time // when it became due (the breakpoint)
	due   bool      // in the session's queue
}

type taskInfo struct {
	tags  []string
	desc  string
	ended bool
}

// Run runs the sessions until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	if !s.o.Config.Enabled {
		<-ctx.Done()
		return nil
	}
	// Before Run: the runtime's position, owned by the loop goroutine,
	// which has not started.
	s.rt.StartAfter(s.o.After)
	return s.rt.Run(ctx, func(ctx context.Context) {
		l := &loop{s: s, sessions: map[string]*session{}, tasks: map[task.ID]*taskInfo{}, sent: map[int64]sentInfo{}, ctx: ctx, ready: map[*session]bool{}}
		l.run(ctx)
	})
}

func (l *loop) run(ctx context.Context) {
	feed, stop := l.s.rt.Follow(ctx, l.s.o.Bus, l.s.o.Store, event.Filter{Kinds: kinds})
	defer stop()
	l.timer = time.NewTimer(time.Hour)
	l.timer.Stop()
	defer l.timer.Stop()
	// The sessions are loaded after the feed started: a change made
	// between the two is seen twice, never missed.
	all, err := l.s.o.Sessions.ListWatchSessions(ctx)
	if err != nil {
		l.s.log.Warn("reading the watcher sessions", "err", err)
		return
	}
	for _, ws := range all {
		if ws.Status == store.WatchActive {
			l.activate(ctx, ws, 0)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-feed:
			if !ok {
				return
			}
			l.s.rt.Safely(func() { l.handle(ctx, e) }, "a watcher session's handler panicked", "kind", e.Kind)
			l.s.rt.Handled(e)
			if len(feed) == 0 {
				l.flush()
			}
		case back := <-l.s.rt.Results():
			l.s.rt.Safely(func() { back(ctx) }, "a watcher session's evaluation result panicked")
		case <-l.timer.C:
			l.next = time.Time{}
			l.s.rt.Safely(func() { l.tick(ctx) }, "a watcher session's timer panicked")
		}
	}
}

// handle takes one event.
func (l *loop) handle(ctx context.Context, e event.Event) {
	switch p := e.Payload.(type) {
	case event.WatchSession:
		seedBefore := int64(0)
		if p.Action == "added" {
			seedBefore = e.ID
		}
		l.reload(ctx, p.Session, seedBefore)
		return
	case event.TaskCreated:
		l.tasks[e.TaskID] = &taskInfo{tags: p.Tags, desc: p.Description}
		return
	case event.TaskStatus:
		if p.To.Terminal() {
			l.ended(ctx, e.TaskID, p.To)
		}
		return
	case event.Delivered:
		l.delivered(ctx, e, p)
	case event.TaskMessage:
		// A session's interjection entered the queue: remember it for its
		// receipt (the log orders this before the delivery).
		if sid, ok := strings.CutPrefix(p.Source, sessionSource); ok && p.Kind == string(inject.Interjection) {
			l.sent[p.InjectionID] = sentInfo{session: sid, task: e.TaskID, queued: e.Time}
		}
	}
	if e.TaskID == "" {
		return
	}
	now := time.Now()
	for _, ss := range l.sessions {
		if !l.targets(ctx, ss, e.TaskID) {
			continue
		}
		l.observe(ss, e, now)
	}
}

// observe adds e to the session's watch of its task.
func (l *loop) observe(ss *session, e event.Event, now time.Time) {
	w := ss.watches[e.TaskID]
	if w == nil {
		w = &watch{}
		ss.watches[e.TaskID] = w
	}
	kept, bp := w.buf.Add(e)
	if kept && w.first.IsZero() {
		w.first = now
	}
	if w.buf.Len() == 0 {
		return
	}
	if bp != interject.None {
		l.due(ss, e.TaskID, w, now)
		return
	}
	l.wake(w.first.Add(l.s.o.Config.Settle), now)
}

// due puts the task's activity in the session's queue; flush starts it
// once the feed has no event waiting.
func (l *loop) due(ss *session, id task.ID, w *watch, now time.Time) {
	if w.due {
		l.s.count(func(st *Stats) { st.Coalesced++ })
	} else {
		w.due, w.bpAt = true, now
		ss.queue = append(ss.queue, id)
	}
	l.ready[ss] = true
}

// flush starts the evaluations that became due.
func (l *loop) flush() {
	if len(l.ready) == 0 {
		return
	}
	now := time.Now()
	for ss := range l.ready {
		l.start(ss, now)
	}
	clear(l.ready)
}

// start starts the session's next evaluation when none is in flight and
// its rate allows; otherwise the timer comes back when it does.
func (l *loop) start(ss *session, now time.Time) {
	if ss.inflight || ss.ws.Status != store.WatchActive {
		return
	}
	if at := ss.lastStart.Add(l.s.o.Config.MinInterval); !ss.lastStart.IsZero() && now.Before(at) {
		if len(ss.queue) > 0 {
			l.wake(at, now)
		}
		return
	}
	for len(ss.queue) > 0 {
		id := ss.queue[0]
		ss.queue = ss.queue[1:]
		w := ss.watches[id]
		if w == nil || !w.due {
			continue
		}
		activity, n := w.buf.Take()
		bpAt := w.bpAt
		w.due, w.first, w.bpAt = false, time.Time{}, time.Time{}
		if n == 0 {
			continue
		}
		info := l.tasks[id]
		j := job{ws: ss.ws, task: id, activity: activity, observations: n, breakpoint: bpAt}
		if info != nil {
			j.desc = info.desc
		}
		ss.inflight, ss.lastStart = true, now
		l.s.rt.Go(l.ctx, func(ctx context.Context) func(context.Context) {
			return l.evaluated(l.s.evaluate(ctx, j))
		})
		return
	}
}

// wake makes the timer fire at at (or earlier, when it already would).
func (l *loop) wake(at, now time.Time) {
	if !l.next.IsZero() && !at.Before(l.next) {
		return
	}
	l.next = at
	l.timer.Reset(max(at.Sub(now), 0))
}

// tick makes due what settled and starts what the rate limit held.
func (l *loop) tick(ctx context.Context) {
	now := time.Now()
	for _, ss := range l.sessions {
		if ss.ws.Status != store.WatchActive {
			continue
		}
		for id, w := range ss.watches {
			if w.due || w.first.IsZero() || w.buf.Len() == 0 {
				continue
			}
			if at := w.first.Add(l.s.o.Config.Settle); !now.Before(at) {
				w.due, w.bpAt = true, now
				ss.queue = append(ss.queue, id)
			} else {
				l.wake(at, now)
			}
		}
		l.start(ss, now)
	}
}

// targets reports whether the session watches the task.
func (l *loop) targets(ctx context.Context, ss *session, id task.ID) bool {
	t := ss.ws.Target
	switch {
	case ss.ws.Status != store.WatchActive:
		return false
	case t.TaskID != "":
		return t.TaskID == id
	case t.All:
		return true
	}
	info := l.info(ctx, id)
	if info == nil {
		return false
	}
	for _, tg := range t.Tags {
		if slices.Contains(info.tags, tg) {
			return true
		}
	}
	return false
}

// info returns what the loop knows of a task, reading it once.
func (l *loop) info(ctx context.Context, id task.ID) *taskInfo {
	if info, ok := l.tasks[id]; ok {
		return info
	}
	t, err := l.s.o.Store.GetTask(ctx, id)
	if err != nil {
		l.s.log.Warn("reading a watched task", "task_id", id, "err", err)
		return nil
	}
	info := &taskInfo{tags: t.Tags, desc: t.Description, ended: t.Status.Terminal()}
	l.tasks[id] = info
	return info
}

// reload takes a session's change from the store.
func (l *loop) reload(ctx context.Context, id string, seedBefore int64) {
	ws, err := l.s.o.Sessions.GetWatchSession(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			l.s.log.Warn("reading a watcher session", "session", id, "err", err)
		}
		delete(l.sessions, id)
		return
	}
	if ws.Status != store.WatchActive {
		if ss := l.sessions[id]; ss != nil {
			ss.ws = ws // an evaluation in flight finds it no longer active
		}
		if ws.Status == store.WatchEnded {
			delete(l.sessions, id)
		} else if ss := l.sessions[id]; ss != nil {
			ss.watches, ss.queue = map[task.ID]*watch{}, nil
		}
		return
	}
	if ss := l.sessions[id]; ss != nil {
		ss.ws = ws
		return
	}
	l.activate(ctx, ws, seedBefore)
}

// activate starts following an active session. A session just added on
// one task (seedBefore: the ID of the event that added it) starts with the
// task's activity logged before that event (recent and bounded; what came
// after arrives on the feed), so that one added after the task began, or
// attached as the task was created, misses nothing before its first
// evaluation.
func (l *loop) activate(ctx context.Context, ws store.WatchSession, seedBefore int64) {
	ss := &session{ws: ws, watches: map[task.ID]*watch{}}
	l.sessions[ws.ID] = ss
	id := ws.Target.TaskID
	if id == "" {
		return
	}
	if info := l.info(ctx, id); info != nil && info.ended {
		l.endSession(ctx, ss, "task "+string(id)+" had finished")
		return
	}
	if seedBefore <= 0 {
		return
	}
	evs, err := l.s.o.Store.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: id, Kinds: kinds}, Since: time.Now().Add(-seedWindow), Limit: seedEvents})
	if err != nil {
		l.s.log.Warn("reading a watched task's activity", "task_id", id, "err", err)
		return
	}
	now := time.Now()
	for _, e := range evs {
		if e.ID >= seedBefore {
			break
		}
		l.observe(ss, e, now)
	}
}

// ended forgets a finished task: its watches go, and a session on it alone
// ends. An evaluation in flight finds the task ended and sends nothing.
func (l *loop) ended(ctx context.Context, id task.ID, st task.Status) {
	if info := l.tasks[id]; info != nil {
		info.ended = true
	} else {
		l.tasks[id] = &taskInfo{ended: true}
	}
	for inj, si := range l.sent {
		if si.task == id {
			delete(l.sent, inj)
		}
	}
	for _, ss := range l.sessions {
		delete(ss.watches, id)
		if ss.ws.Target.TaskID == id {
			l.endSession(ctx, ss, "task "+string(id)+" "+string(st))
		}
	}
}

func (l *loop) endSession(ctx context.Context, ss *session, reason string) {
	ws, err := l.s.update(ctx, ss.ws.ID, "ended", func(ws *store.WatchSession) error {
		if ws.Status == store.WatchEnded {
			return errAlready
		}
		ws.Status, ws.Reason = store.WatchEnded, reason
		return nil
	})
	if err != nil && !errors.Is(err, errAlready) {
		l.s.log.Warn("ending a watcher session", "session", ss.ws.ID, "err", err)
		return
	}
	if err == nil {
		ss.ws = ws
	}
	delete(l.sessions, ss.ws.ID)
}

var errAlready = errors.New("already so")

// delivered records the receipt of the sessions' interjections.
func (l *loop) delivered(ctx context.Context, e event.Event, p event.Delivered) {
	var evs []event.Event
	for _, id := range p.InjectionIDs {
		si, ok := l.sent[id]
		if !ok {
			continue
		}
		delete(l.sent, id)
		evs = append(evs, event.New(e.Time, e.TaskID, event.WatchDelivered{Session: si.session, InjectionID: id, Turn: p.Turn,
			LatencyMs: e.Time.Sub(si.queued).Milliseconds()}))
	}
	if len(evs) == 0 {
		return
	}
	if _, err := l.s.o.Store.AppendEvents(ctx, evs...); err != nil {
		l.s.log.Warn("recording an interjection's delivery", "task_id", e.TaskID, "err", err)
	}
}
