package mainwatch

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// All the notices of one move of main, through the executor's batch door,
// are stored in one commit, published to the bus at once with main.updated
// and each task's rebase.required, conflicting task first; nothing is
// repeated by the next look.
func TestOneMoveOneCommit(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Urgency = Blocking
	x := newE2E(t, cfg)
	var (
		mu    sync.Mutex
		calls [][]event.Event
	)
	x.mu.Lock()
	x.publish = func(evs []event.Event) {
		mu.Lock()
		calls = append(calls, evs)
		mu.Unlock()
	}
	x.mu.Unlock()
	published := func() [][]event.Event {
		mu.Lock()
		defer mu.Unlock()
		out := calls
		calls = nil
		return out
	}
	a, _ := x.task(task.Running, "a.txt")
	b, wb := x.task(task.Paused, "a.txt")
	c, _ := x.task(task.Running, "c.txt") // main changes none of its files: fyi
	x.commit(wb.Path, "b's change", map[string]string{"a.txt": "from b\n"})
	x.cycle() // the first look: everyone is up to date
	published()

	main := x.commit(x.repo, "feat: change a", map[string]string{"a.txt": "from main\n"})
	x.cycle()
	got := published()
	if len(got) != 1 {
		t.Fatalf("the move was published in %d batches, want 1: %v", len(got), got)
	}
	var seq []string
	for _, ev := range got[0] {
		seq = append(seq, string(ev.Kind)+" "+string(ev.TaskID))
	}
	want := []string{"main.updated ",
		"rebase.required " + string(b.ID), "task.message " + string(b.ID),
		"rebase.required " + string(a.ID), "task.message " + string(a.ID),
		"rebase.required " + string(c.ID), "task.message " + string(c.ID)}
	if !slices.Equal(seq, want) {
		t.Fatalf("published %v\nwant %v", seq, want)
	}
	for _, tc := range []struct {
		id     task.ID
		urg    inject.Urgency
		urgent bool
	}{{b.ID, Blocking, true}, {a.ID, Blocking, true}, {c.ID, FYI, false}} {
		p, err := x.st.Pending(context.Background(), tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 1 || p[0].Kind != inject.Rebase || p[0].Urgency != tc.urg || p[0].Urgent != tc.urgent || p[0].Attrs["main_commit"] != words.ShortCommit(main) {
			t.Errorf("queue of %s = %+v, want one %s notice about %s", tc.id, p, tc.urg, words.ShortCommit(main))
		}
	}
	if h := x.w.Health(); h.Notices != 3 {
		t.Errorf("health counts %d notices, want 3", h.Notices)
	}
	states, err := x.w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.State != StateNotified || s.LastNoticeMain != main {
			t.Errorf("%s: state %s about %s, want notified about %s", s.TaskID, s.State, s.LastNoticeMain, main)
		}
	}
	x.cycle()
	if got := published(); len(got) != 0 {
		t.Errorf("a second look published %v", got)
	}
}

// Track sets up the watch on main's refs before it returns: the first
// task of a repository is watched before it runs, not at the watcher's
// next pass; a commit on main right after reaches it through the watch
// (polling is an hour away).
func TestTrackWatchesBeforeReturning(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.w.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	testkit.WaitFor(t, "the first look", func() bool { return e.w.Health().Cycles >= 1 })
	if !e.w.Health().Watching {
		t.Skip("no filesystem notifications here")
	}
	heads := filepath.Join(e.repo, ".git", "refs", "heads")
	if e.watching(heads) {
		t.Fatal("main is watched before any task")
	}
	a, wa := e.task(task.Running, "a.txt")
	e.w.Track(context.Background(), wa)
	if !e.watching(heads) {
		t.Fatalf("Track returned before %s was watched", heads)
	}
	e.commit(e.repo, "feat: change a", map[string]string{"a.txt": "from main\n"})
	deadline := time.After(testkit.WaitLimit)
	for {
		select {
		case n := <-e.got:
			if n.TaskID == a.ID {
				return
			}
		case <-deadline:
			t.Fatalf("no notice after %v", testkit.WaitLimit)
		}
	}
}

// watching reports whether the watcher has a filesystem watch on dir.
func (e *mwEnv) watching(dir string) bool {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	_, ok := e.w.watchDirs[dir]
	return ok
}
