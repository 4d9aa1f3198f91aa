// Package overlap is the overlap radar: it follows every running task's
// file changes on the event bus and, when a task starts changing a file
// another running task of the same repository has changed, tells both
// through the executor's one door before their work conflicts at landing.
//
// Per running task it keeps the set of files changed relative to its base
// (from agent.file.changed observations; no polling), and an index from
// each file to the tasks that changed it, so that one observation costs a
// map lookup or two whatever the number of tasks. A new shared file starts
// a forecast of the pair, run as a background job of the supervisor
// runtime: each side's work tree (committed and uncommitted, as on disk)
// is photographed as a commit (git.WorkTreeTree, git.CommitTree; nothing
// of the worktree, index or refs is touched) and `git merge-tree
// --write-tree` predicts their merge. Both tasks are then told, as a sync
// message from the other task: helpful when the forecast is a conflict,
// fyi when they only share files, with the other task's id, description
// (escaped), the shared files and the other side's diff stat. A pair is
// told at most once per file set, and again only when the set grows or the
// forecast goes from clean to conflict.
//
// A task tagged NoNoticesTag (task new --no-overlap-notices) is tracked
// (it shows in the matrix) but is not told, nor told of.
//
// Events: overlap.found (a pair's shared files grew), overlap.forecast
// (a pair's forecast changed), overlap.notice (a task was told).
package overlap

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// NoNoticesTag is the tag that keeps a task out of the radar's notices.
const NoNoticesTag = "no-overlap-notices"

// Source is the sender of the radar's notices.
const Source = inject.Source("overlap")

// The forecasts of a pair.
const (
	Clean    = "clean"
	Conflict = "conflict"
	Unknown  = "unknown"
)

// Config configures the radar (supervision.overlap).
type Config struct {
	// Enabled turns the notices on; the tracking (and the matrix) runs
	// whenever the radar runs.
	Enabled bool
}

// Store is what the radar reads of tasks and worktrees, and the events it
// records.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, o store.ListOptions) ([]task.Task, error)
	GetWorktree(ctx context.Context, id task.ID) (store.Worktree, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
}

// Options wire a Radar.
type Options struct {
	Config Config
	Store  Store
	Bus    *event.Bus
	// Log is the event log a restarted loop reads its missed events from.
	Log event.Log
	// Inject is the executor's door.
	Inject func(ctx context.Context, inj inject.Injection) (inject.Injection, error)
	// Forecaster predicts a pair's merge; nil means GitForecaster.
	Forecaster Forecaster
	Logger     *slog.Logger
}

// Forecaster predicts merging two tasks' work.
type Forecaster interface {
	Forecast(ctx context.Context, a, b Side) (Forecast, error)
}

// Side is one task of a pair, as the forecaster needs it.
type Side struct {
	TaskID task.ID
	Repo   string // the repository's main work tree
	Path   string // the task's worktree
	// Files are the files the pair shares (the same on both sides).
	Files []string
}

// Forecast is what merging a pair would give.
type Forecast struct {
	// Result is Clean or Conflict; Conflicts the conflicting files.
	Result    string
	Conflicts []string
	// StatA and StatB are each side's diff stat since their merge base.
	StatA, StatB string
	// Lines are where each side changed each shared file, in lines of
	// their merge base (nil when not known).
	Lines []FileLines
	// Took is the time git merge-tree took.
	Took time.Duration
}

// member is one running task as the radar knows it.
type member struct {
	t     task.Task
	repo  string
	path  string
	files map[string]bool
	quiet bool // tagged NoNoticesTag
}

// pairKey names a pair, the smaller id first.
type pairKey struct{ a, b task.ID }

func keyOf(x, y task.ID) pairKey {
	if y < x {
		x, y = y, x
	}
	return pairKey{x, y}
}

// pair is what the radar knows of two tasks that share files.
type pair struct {
	files     []string // shared files, sorted
	forecast  string   // the last forecast ("" before the first)
	conflicts []string
	lines     []FileLines // from the last forecast
	told      string      // the file set last told ("" never)
	toldWith  string      // the forecast last told
	pending   bool        // a forecast job runs
	again     bool        // the files grew while it ran
}

// Radar is the overlap radar. Run owns its loop; Matrix is safe for
// concurrent use.
type Radar struct {
	o   Options
	log *slog.Logger
	rt  *supervisor.Runtime

	// owned by the loop goroutine
	members map[task.ID]*member
	byFile  map[string]map[task.ID]bool // repo+"\x00"+file → the tasks that changed it
	pairs   map[pairKey]*pair
	skip    map[task.ID]bool // running tasks without a worktree (not tracked)

	mu     sync.Mutex
	matrix []Pair // the published matrix, guarded by mu
	stats  Stats
}

// Stats are the radar's counters.
type Stats struct {
	Observations uint64 `json:"observations"`
	Overlaps     uint64 `json:"overlaps"`
	Forecasts    uint64 `json:"forecasts"`
	Notices      uint64 `json:"notices"`
	// MergeTree is the total time git merge-tree took.
	MergeTree time.Duration `json:"merge_tree_ns"`
}

// New returns a Radar.
func New(o Options) *Radar {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Forecaster == nil {
		o.Forecaster = GitForecaster{}
	}
	return &Radar{o: o, log: o.Logger,
		rt:      supervisor.New(supervisor.Options{Name: "the overlap radar", Logger: o.Logger}),
		members: map[task.ID]*member{}, skip: map[task.ID]bool{}, byFile: map[string]map[task.ID]bool{}, pairs: map[pairKey]*pair{}}
}

// StartAfter makes the first feed start after event id of the log.
func (r *Radar) StartAfter(id int64) { r.rt.StartAfter(id) }

// Stats returns the radar's counters.
func (r *Radar) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Radar) count(fn func(*Stats)) {
	r.mu.Lock()
	fn(&r.stats)
	r.mu.Unlock()
}

// Run runs the radar until ctx ends.
func (r *Radar) Run(ctx context.Context) error {
	return r.rt.Run(ctx, r.loop)
}

func (r *Radar) loop(ctx context.Context) {
	feed, stop := r.rt.Follow(ctx, r.o.Bus, r.o.Log, event.Filter{Kinds: []string{string(event.KindFileChanged), string(event.KindTaskStatus)}})
	defer stop()
	r.adoptRunning(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-feed:
			if !ok {
				return
			}
			r.rt.Safely(func() { r.Observe(ctx, e) }, "the overlap radar panicked handling an event; going on")
			r.rt.Handled(e)
		case back := <-r.rt.Results():
			r.rt.Safely(func() { back(ctx) }, "the overlap radar panicked handling a forecast; going on")
		}
	}
}

// adoptRunning adds every task running now.
func (r *Radar) adoptRunning(ctx context.Context) {
	ts, err := r.o.Store.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Running}})
	if err != nil {
		r.log.Warn("listing running tasks", "err", err)
		return
	}
	for _, t := range ts {
		if r.members[t.ID] == nil {
			// A task running without a worktree record may be having it
			// made now: it is not marked as having none.
			r.admit(ctx, t, 0, false)
		}
	}
}

// admit starts tracking t; nil when it has no worktree. Without one, and
// with settled (its file changes come from somewhere else), its changes
// are ignored from then on.
func (r *Radar) admit(ctx context.Context, t task.Task, upTo int64, settled bool) *member {
	w, err := r.o.Store.GetWorktree(ctx, t.ID)
	if err != nil || w.Path == "" {
		if settled && (err == nil || errors.Is(err, store.ErrNotFound)) {
			r.skip[t.ID] = true
		}
		return nil
	}
	m := &member{t: t, repo: w.Repo, path: w.Path, files: map[string]bool{}, quiet: slices.Contains(t.Tags, NoNoticesTag)}
	r.members[t.ID] = m
	r.readBack(ctx, m, upTo)
	return m
}

// Observe handles one event of the bus (the loop's; exported for tests
// and benchmarks that drive the radar without a bus).
func (r *Radar) Observe(ctx context.Context, e event.Event) {
	if e.TaskID == "" {
		return
	}
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		if p.To.Terminal() {
			r.forget(e.TaskID)
		}
	case event.FileChanged:
		r.changed(ctx, e.TaskID, p.Path, e.ID)
		r.count(func(s *Stats) { s.Observations++ })
	}
}

// forget drops a finished task and its pairs.
func (r *Radar) forget(id task.ID) {
	delete(r.skip, id)
	m := r.members[id]
	if m == nil {
		return
	}
	for f := range m.files {
		k := m.repo + "\x00" + f
		delete(r.byFile[k], id)
		if len(r.byFile[k]) == 0 {
			delete(r.byFile, k)
		}
	}
	delete(r.members, id)
	for k := range r.pairs {
		if k.a == id || k.b == id {
			delete(r.pairs, k)
		}
	}
	r.publish()
}

// changed records that task id changed file path.
func (r *Radar) changed(ctx context.Context, id task.ID, path string, at int64) {
	m := r.members[id]
	if m == nil {
		if r.skip[id] {
			return
		}
		t, err := r.o.Store.GetTask(ctx, id)
		if err != nil || t.Status.Terminal() {
			return
		}
		if m = r.admit(ctx, t, at, true); m == nil || m.files[path] {
			return // none, or the change was read back from the log
		}
	}
	k := m.repo + "\x00" + path
	if m.files[path] {
		// A shared file changed again: a clean forecast may have become a
		// conflict.
		for o := range r.byFile[k] {
			if p := r.pairs[keyOf(id, o)]; o != id && p != nil && p.forecast != Conflict {
				r.forecast(ctx, keyOf(id, o))
			}
		}
		return
	}
	if grown := r.index(m, path); len(grown) > 0 {
		for _, pk := range grown {
			p := r.pairs[pk]
			o := pk.a
			if o == id {
				o = pk.b
			}
			r.count(func(s *Stats) { s.Overlaps++ })
			r.record(ctx, event.Event{TaskID: id, Payload: event.OverlapFound{Other: string(o), Files: slices.Clone(p.files)}})
			r.forecast(ctx, pk)
		}
		r.publish()
	}
}

// index records that m changed path: in its files, the file index and the
// pairs it grows, which it returns.
func (r *Radar) index(m *member, path string) []pairKey {
	if m.files[path] {
		return nil
	}
	m.files[path] = true
	k := m.repo + "\x00" + path
	others := r.byFile[k]
	if others == nil {
		others = map[task.ID]bool{}
		r.byFile[k] = others
	}
	others[m.t.ID] = true
	var grown []pairKey
	for o := range others {
		if o == m.t.ID {
			continue
		}
		pk := keyOf(m.t.ID, o)
		p := r.pairs[pk]
		if p == nil {
			p = &pair{}
			r.pairs[pk] = p
		}
		p.files = append(p.files, path)
		slices.Sort(p.files)
		grown = append(grown, pk)
	}
	return grown
}

// readBack restores what the event log says of a task admitted after it
// started changing files (the radar or the daemon restarted): the files it
// changed, the pairs they make, and what it was told of each, so that
// nothing is told twice. A pair the log shows untold is forecast. It reads
// up to event upTo (the one being handled; 0: all), the later ones
// coming on the feed.
func (r *Radar) readBack(ctx context.Context, m *member, upTo int64) {
	told := map[task.ID]event.OverlapNotice{}
	grown := map[pairKey]bool{}
	q := event.Query{Filter: event.Filter{TaskID: m.t.ID, Kinds: []string{string(event.KindFileChanged), string(event.KindOverlapNotice)}}, Limit: readPage}
	for range maxPages {
		evs, err := r.o.Store.ReadEvents(ctx, q)
		if err != nil {
			r.log.Warn("reading a task's file changes back", "task", m.t.ID, "err", err)
			break
		}
		for _, e := range evs {
			if upTo > 0 && e.ID > upTo {
				evs = nil
				break
			}
			switch p := e.Payload.(type) {
			case event.FileChanged:
				for _, pk := range r.index(m, p.Path) {
					grown[pk] = true
				}
			case event.OverlapNotice:
				told[task.ID(p.Other)] = p
			}
		}
		if len(evs) < readPage {
			break
		}
		q.AfterID = evs[len(evs)-1].ID
	}
	for pk := range grown {
		p := r.pairs[pk]
		o := pk.a
		if o == m.t.ID {
			o = pk.b
		}
		if n, ok := told[o]; ok {
			p.told, p.toldWith = strings.Join(n.Files, "\x00"), n.Forecast
			if p.forecast == "" {
				p.forecast = n.Forecast
			}
		}
		if p.told != strings.Join(p.files, "\x00") {
			r.count(func(s *Stats) { s.Overlaps++ })
			r.record(ctx, event.Event{TaskID: m.t.ID, Payload: event.OverlapFound{Other: string(o), Files: slices.Clone(p.files)}})
			r.forecast(ctx, pk)
		}
	}
	if len(grown) > 0 {
		r.publish()
	}
}

// readPage and maxPages bound what readBack reads of one task's log.
const (
	readPage = 1000
	maxPages = 20
)

// forecast starts a forecast of the pair, unless one runs (then it runs
// again when that one ends).
func (r *Radar) forecast(ctx context.Context, k pairKey) {
	p := r.pairs[k]
	if p.pending {
		p.again = true
		return
	}
	a, b := r.members[k.a], r.members[k.b]
	if a == nil || b == nil {
		return
	}
	p.pending = true
	sa := Side{TaskID: k.a, Repo: a.repo, Path: a.path, Files: slices.Clone(p.files)}
	sb := Side{TaskID: k.b, Repo: b.repo, Path: b.path, Files: sa.Files}
	fc := r.o.Forecaster
	r.rt.Go(ctx, func(ctx context.Context) func(context.Context) {
		f, err := fc.Forecast(ctx, sa, sb)
		if err != nil {
			r.log.Warn("forecasting an overlap", "a", k.a, "b", k.b, "err", err)
			f = Forecast{Result: Unknown}
		}
		return func(ctx context.Context) { r.forecasted(ctx, k, f) }
	})
}

// forecasted takes a forecast back on the loop: records a change, and
// tells both tasks when the pair was not told of this file set or the
// forecast went from clean to conflict.
func (r *Radar) forecasted(ctx context.Context, k pairKey, f Forecast) {
	defer r.count(func(s *Stats) { s.Forecasts++; s.MergeTree += f.Took })
	p := r.pairs[k]
	if p == nil {
		return // one of them finished
	}
	p.pending = false
	p.lines = f.Lines
	if f.Result != p.forecast {
		r.record(ctx, event.Event{TaskID: k.a, Payload: event.OverlapForecast{Other: string(k.b), From: p.forecast, To: f.Result, Conflicts: f.Conflicts}})
		p.forecast, p.conflicts = f.Result, f.Conflicts
	}
	r.publish()
	if p.again {
		p.again = false
		r.forecast(ctx, k)
		return
	}
	set := strings.Join(p.files, "\x00")
	escalated := p.told != "" && p.toldWith != Conflict && f.Result == Conflict
	if !r.o.Config.Enabled || (p.told == set && !escalated) || (p.told != "" && !escalated && isSubset(set, p.told)) {
		return
	}
	a, b := r.members[k.a], r.members[k.b]
	if a == nil || b == nil || a.quiet || b.quiet {
		return
	}
	p.told, p.toldWith = set, f.Result
	r.tell(ctx, a, b, p, f.StatB)
	r.tell(ctx, b, a, p, f.StatA)
}

// isSubset reports whether the file set s holds only files of t (both
// joined with NUL).
func isSubset(s, t string) bool {
	in := map[string]bool{}
	for _, f := range strings.Split(t, "\x00") {
		in[f] = true
	}
	for _, f := range strings.Split(s, "\x00") {
		if !in[f] {
			return false
		}
	}
	return true
}

// tell sends to the notice about other, whose diff stat is stat.
func (r *Radar) tell(ctx context.Context, to, other *member, p *pair, stat string) {
	u := inject.FYI
	if p.forecast == Conflict {
		u = inject.Helpful
	}
	inj := inject.Injection{TaskID: to.t.ID, Kind: inject.Sync, Source: Source, Urgency: u, Quiet: true,
		Attrs: map[string]string{"from": string(other.t.ID), "about": "overlap", "forecast": p.forecast},
		Text:  Notice(other.t, p.files, p.forecast, p.conflicts, stat) + engine.Neutralize(LinesNote(p.lines, to.t.ID < other.t.ID))}
	got, err := r.o.Inject(ctx, inj)
	if err != nil {
		r.log.Warn("sending an overlap notice", "task", to.t.ID, "err", err)
		return
	}
	r.count(func(s *Stats) { s.Notices++ })
	r.record(ctx, event.Event{TaskID: to.t.ID, Payload: event.OverlapNotice{Other: string(other.t.ID), Files: slices.Clone(p.files),
		Urgency: string(u), Forecast: p.forecast, Injection: got.ID}})
}

func (r *Radar) record(ctx context.Context, e event.Event) {
	e = event.New(time.Now(), e.TaskID, e.Payload)
	if _, err := r.o.Store.AppendEvents(ctx, e); err != nil {
		r.log.Warn("recording an overlap event", "err", err)
	}
}

// publish copies the pairs into the matrix Matrix serves.
func (r *Radar) publish() {
	m := make([]Pair, 0, len(r.pairs))
	for _, k := range slices.SortedFunc(maps.Keys(r.pairs), func(x, y pairKey) int {
		return strings.Compare(string(x.a)+" "+string(x.b), string(y.a)+" "+string(y.b))
	}) {
		p := r.pairs[k]
		if len(p.files) == 0 {
			continue
		}
		m = append(m, Pair{A: k.a, B: k.b, Files: slices.Clone(p.files), Forecast: shown(p.forecast), Conflicts: slices.Clone(p.conflicts), Lines: p.lines})
	}
	r.mu.Lock()
	r.matrix = m
	r.mu.Unlock()
}

func shown(f string) string {
	if f == "" {
		return "pending"
	}
	return f
}

// Pair is one entry of the matrix: two running tasks that changed the
// same files, and the forecast of merging their work.
type Pair struct {
	A         task.ID  `json:"a"`
	B         task.ID  `json:"b"`
	Files     []string `json:"files"`
	Forecast  string   `json:"forecast"`
	Conflicts []string `json:"conflicts,omitempty"`
	// Lines are where each side (A, B) changed each shared file, from the
	// last forecast: whether their line ranges intersect.
	Lines []FileLines `json:"lines,omitempty"`
}

// Matrix returns the running tasks that share files, pair by pair;
// with id set, only the pairs of that task.
func (r *Radar) Matrix(id task.ID) []Pair {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []Pair{}
	for _, p := range r.matrix {
		if id == "" || p.A == id || p.B == id {
			out = append(out, p)
		}
	}
	return out
}
