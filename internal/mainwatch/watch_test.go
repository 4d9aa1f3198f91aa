package mainwatch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

func defaults() Config {
	return Config{Enabled: true, Interval: time.Hour, Urgency: Helpful, Cooldown: time.Minute, Remote: "origin", Fetch: true, NotifyUnrelated: true}
}

// A commit landing on main reaches every related behind task through the
// filesystem watch (polling is an hour away), tasks whose forecast
// conflicts first; with notify_unrelated off, a task none of whose files
// main changed is not told (unrelated_test.go has the default, on).
func TestCommitOnMainNotifiesBehindTasks(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.NotifyUnrelated = false
	e := newWatchEnv(t, cfg)
	a, _ := e.task(task.Running, "a.txt")
	b, wb := e.task(task.Paused, "a.txt")
	c, _ := e.task(task.Running, "c.txt") // unrelated to what main changes
	// b committed a conflicting change of a.txt on its branch.
	e.commit(wb.Path, "b's change", map[string]string{"a.txt": "from b\n"})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.w.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	// The first look, then the watch and the look after it.
	testkit.WaitFor(t, "two scan cycles", func() bool { return e.w.Health().Cycles >= 2 })

	start := time.Now()
	main := e.commit(e.repo, "feat: change a", map[string]string{"a.txt": "from main\n"})
	var got []inject.Injection
	for len(got) < 2 {
		select {
		case n := <-e.got:
			got = append(got, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("notices after 10 s: %v", noticeIDs(got))
		}
	}
	t.Logf("commit → both notices queued: %v", time.Since(start))
	if want := []task.ID{b.ID, a.ID}; !slices.Equal(noticeIDs(got), want) {
		t.Errorf("notice order = %v, want the conflicting task first %v", noticeIDs(got), want)
	}
	for _, n := range got {
		if string(n.Urgency) != "helpful" || n.Urgent || !n.Quiet || n.Source != Source {
			t.Errorf("notice %+v: want a quiet helpful notice from %s", n, Source)
		}
		for _, want := range []string{"1 commit behind", "feat: change a", "git merge main"} {
			if !strings.Contains(n.Text, want) {
				t.Errorf("notice to %s lacks %q:\n%s", n.TaskID, want, n.Text)
			}
		}
	}
	if !strings.Contains(got[0].Text, "conflicts in a.txt") {
		t.Errorf("b's notice does not forecast the conflict:\n%s", got[0].Text)
	}
	// c is behind but unrelated: not told; its state says so.
	select {
	case n := <-e.got:
		t.Errorf("unexpected notice to %s", n.TaskID)
	case <-time.After(200 * time.Millisecond):
	}
	states, err := e.w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.TaskID == c.ID && (s.State != StateUnrelated || s.Behind != 1) {
			t.Errorf("c: %+v, want unrelated and 1 behind", s)
		}
		if s.TaskID == a.ID && (s.State != StateNotified || s.LastNotice == nil || s.MainCommit != main) {
			t.Errorf("a: %+v, want notified about %s", s, main)
		}
	}
	ups := e.events(event.KindMainUpdated)
	if len(ups) != 1 {
		t.Fatalf("%d main.updated events, want 1", len(ups))
	}
	if p := ups[0].Payload.(event.MainUpdated); p.NewCommit != main || p.Behind != 3 || p.Rewritten {
		t.Errorf("main.updated = %+v", p)
	}
	if n := len(e.events(event.KindRebaseRequired)); n != 2 {
		t.Errorf("%d rebase.required events, want 2", n)
	}
}

// Nothing is repeated: the same main commit is not told twice, neither by
// a later cycle nor by a restarted daemon (which reads the event log);
// a new commit is told again once the cooldown is over.
func TestNoRepeatsAndCooldown(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	t0 := time.Now()
	e.setClock(t0)
	a, _ := e.task(task.Running, "a.txt")
	e.cycle() // the first look: a is up to date
	e.commit(e.repo, "one", map[string]string{"a.txt": "1\n"})
	e.cycle()
	if got := noticeIDs(e.taken()); !slices.Equal(got, []task.ID{a.ID}) {
		t.Fatalf("notices = %v, want %s", got, a.ID)
	}
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a second cycle told %v again", noticeIDs(got))
	}
	// The daemon restarts: the new watcher has no cache but the log.
	e.w = e.watcher(defaults())
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a restarted watcher told %v again", noticeIDs(got))
	}
	// Main moves again within the cooldown: a waits.
	e.setClock(t0.Add(10 * time.Second))
	e.commit(e.repo, "two", map[string]string{"a.txt": "2\n"})
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("told %v within the cooldown", noticeIDs(got))
	}
	if due := e.w.nextDue(); !due.Equal(t0.Add(time.Minute)) {
		t.Errorf("next due = %v, want the cooldown's end %v", due, t0.Add(time.Minute))
	}
	e.setClock(t0.Add(61 * time.Second))
	e.cycle()
	got := e.taken()
	if len(got) != 1 || !strings.Contains(got[0].Text, "2 commits behind") {
		t.Fatalf("after the cooldown: %+v, want one notice of 2 commits", got)
	}
}

// Merging, finished and not-yet-started tasks get nothing; a waiting task
// is told quietly (it is not woken).
func TestWhoIsTold(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	queued, _ := e.task(task.Queued, "a.txt")
	waiting, _ := e.task(task.Waiting, "a.txt")
	merging, _ := e.task(task.Merging, "a.txt")
	done, _ := e.task(task.Completed, "a.txt")
	gone, _ := e.task(task.Cancelled, "a.txt")
	e.cycle()
	e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
	e.cycle()
	got := noticeIDs(e.taken())
	slices.Sort(got)
	want := []task.ID{queued.ID, waiting.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("told %v, want %v (not merging %s, completed %s, cancelled %s)", got, want, merging.ID, done.ID, gone.ID)
	}
	states, _ := e.w.Status(context.Background())
	for _, s := range states {
		if s.TaskID == merging.ID && s.State != StateMerging {
			t.Errorf("merging task state %q", s.State)
		}
		if s.TaskID == done.ID || s.TaskID == gone.ID {
			t.Errorf("finished task %s listed", s.TaskID)
		}
	}
}

// A task whose files main changed is told at the configured urgency; fyi
// and blocking say what they mean.
func TestUrgencies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		urg  Urgency
		want string
	}{
		{FYI, "No action is needed now"},
		{Helpful, "git merge main"},
		{Blocking, "rebases your branch onto it at your next tool boundary"},
	} {
		t.Run(string(tc.urg), func(t *testing.T) {
			t.Parallel()
			cfg := defaults()
			cfg.Urgency = tc.urg
			e := newWatchEnv(t, cfg)
			a, _ := e.task(task.Running, "a.txt")
			e.cycle()
			e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
			e.cycle()
			got := e.taken()
			if len(got) != 1 || got[0].TaskID != a.ID {
				t.Fatalf("notices %v", noticeIDs(got))
			}
			n := got[0]
			if !strings.Contains(n.Text, tc.want) || string(n.Urgency) != string(tc.urg) || n.Urgent != (tc.urg == Blocking) || n.Quiet == (tc.urg == Blocking) {
				t.Errorf("%s notice %+v", tc.urg, n)
			}
		})
	}
}

// A missing main branch is a clear status, not a crash or a notice; a
// detached HEAD in the main checkout changes nothing (refs are read, not
// HEAD); a force-push is reported as a rewrite.
func TestMainEdgeCases(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Cooldown = 0
	e := newWatchEnv(t, cfg)
	a, _ := e.task(task.Running, "a.txt")
	e.cycle()
	// Detached HEAD in the user's checkout, then main moves anyway.
	old := e.git(e.repo, "rev-parse", "HEAD")
	e.git(e.repo, "checkout", "-q", "--detach")
	e.commit(e.repo, "on detached head", map[string]string{"b.txt": "detached\n"})
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a commit on a detached HEAD (not main) told %v", noticeIDs(got))
	}
	e.git(e.repo, "checkout", "-q", "main")
	next := e.commit(e.repo, "on main", map[string]string{"a.txt": "main\n"})
	e.cycle()
	if got := e.taken(); len(got) != 1 {
		t.Fatalf("notices %v, want 1", noticeIDs(got))
	}
	// Force-push: main rewritten to a sibling of what it was.
	e.git(e.repo, "reset", "-q", "--hard", old)
	rewrite := e.commit(e.repo, "rewritten", map[string]string{"a.txt": "rewritten\n"})
	e.cycle()
	ups := e.events(event.KindMainUpdated)
	last := ups[len(ups)-1].Payload.(event.MainUpdated)
	if last.NewCommit != rewrite || last.Previous != next || !last.Rewritten {
		t.Errorf("main.updated = %+v, want a rewrite from %s to %s", last, next, rewrite)
	}
	got := e.taken()
	if len(got) != 1 || !strings.Contains(got[0].Text, "rewritten (force-pushed)") {
		t.Errorf("notice after the rewrite: %+v", got)
	}
	// main disappears: a clear state for every task, nothing sent.
	e.git(e.repo, "checkout", "-q", "--detach")
	e.git(e.repo, "branch", "-q", "-D", "main")
	e.cycle()
	states, err := e.w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].TaskID != a.ID || states[0].State != StateError || !strings.Contains(states[0].Note, "has no branch main") {
		t.Errorf("states without main: %+v", states)
	}
	if h := e.w.Health(); len(h.Repos) != 1 || !strings.Contains(h.Repos[0].Error, "no branch main") {
		t.Errorf("health: %+v", h)
	}
}

// A repository with a remote watches origin/main when it is ahead of the
// local main (fetched every cycle); an unreachable remote skips the fetch
// with one warning and the watcher goes on with what it has.
func TestRemoteAndOffline(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	bare := t.TempDir() + "/remote.git"
	e.git(e.repo, "clone", "-q", "--bare", e.repo, bare)
	e.git(e.repo, "remote", "add", "origin", bare)
	e.git(e.repo, "fetch", "-q", "origin")
	a, _ := e.task(task.Running, "a.txt")
	e.w.cycle(context.Background(), nil, true)
	// Someone else pushes to the remote.
	other := t.TempDir() + "/other"
	e.git(e.repo, "clone", "-q", bare, other)
	pushed := e.commit(other, "upstream change", map[string]string{"a.txt": "upstream\n"})
	e.git(other, "push", "-q", "origin", "main")
	e.w.cycle(context.Background(), nil, true) // fetches
	got := e.taken()
	if len(got) != 1 || got[0].TaskID != a.ID || !strings.Contains(got[0].Text, "origin/main moved") || got[0].Attrs["main"] != "origin/main" {
		t.Fatalf("notices after a push upstream: %+v", got)
	}
	if h := e.w.Health(); h.Repos[0].Commit != pushed || h.Repos[0].Main != "origin/main" {
		t.Errorf("health %+v, want origin/main at %s", h.Repos, pushed)
	}
	// The remote goes away: the fetch fails, once reported, nothing lost.
	e.git(e.repo, "remote", "set-url", "origin", t.TempDir()+"/nowhere.git")
	e.w.cycle(context.Background(), nil, true)
	e.w.cycle(context.Background(), nil, true)
	h := e.w.Health()
	if h.Repos[0].FetchErr == "" || h.Repos[0].Commit != pushed {
		t.Errorf("offline health %+v", h.Repos)
	}
}

// A panic in a cycle is recovered and counted; the next cycle works.
func TestCyclePanicRecovered(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	e.task(task.Running, "a.txt")
	e.cycle()
	e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
	door := e.w.inject
	e.w.inject = func(context.Context, inject.Injection) error { panic("boom") }
	e.cycle()
	if h := e.w.Health(); h.Panics != 1 {
		t.Fatalf("panics = %d, want 1", h.Panics)
	}
	e.w.inject = door
	e.commit(e.repo, "y", map[string]string{"a.txt": "y\n"})
	e.cycle()
	if got := e.taken(); len(got) != 1 {
		t.Errorf("after a panic: notices %v, want 1", noticeIDs(got))
	}
}

// task rebase: a blocking request through the same door, with a clear
// answer for each state.
func TestRequestRebase(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	running, _ := e.task(task.Running, "a.txt")
	paused, _ := e.task(task.Paused, "a.txt")
	merging, _ := e.task(task.Merging, "a.txt")
	current, _ := e.task(task.Running, "a.txt")
	e.commit(e.repo, "x", map[string]string{"c.txt": "x\n"})
	// current is brought up to date by hand.
	cw, _ := e.st.GetWorktree(context.Background(), current.ID)
	e.git(cw.Path, "merge", "-q", "--ff-only", "main")

	ctx := context.Background()
	rs, err := e.w.RequestRebase(ctx, []task.ID{running.ID}, false)
	if err != nil || len(rs) != 1 || rs[0].Outcome != "requested" || !strings.Contains(rs[0].Note, "next tool boundary") {
		t.Fatalf("running: %+v, %v", rs, err)
	}
	n := e.taken()
	if len(n) != 1 || !n[0].Urgent || string(n[0].Urgency) != "blocking" || n[0].Source != "user" {
		t.Fatalf("request notice %+v", n)
	}
	if rs, _ := e.w.RequestRebase(ctx, []task.ID{paused.ID}, false); rs[0].Outcome != "requested" || !strings.Contains(rs[0].Note, "when it is resumed") {
		t.Errorf("paused: %+v", rs)
	}
	var re *RefusedError
	if _, err := e.w.RequestRebase(ctx, []task.ID{merging.ID}, false); !errors.As(err, &re) || !strings.Contains(err.Error(), "merge queue") {
		t.Errorf("merging: %v", err)
	}
	if rs, _ := e.w.RequestRebase(ctx, []task.ID{current.ID}, false); rs[0].Outcome != "up_to_date" {
		t.Errorf("current: %+v", rs)
	}
	e.taken()
	rs, err = e.w.RequestRebase(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []task.ID
	for _, r := range rs {
		ids = append(ids, r.TaskID)
	}
	want := []task.ID{running.ID, paused.ID}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("--all asked %v, want %v", ids, want)
	}
	for _, ev := range e.events(event.KindRebaseRequired) {
		if !ev.Payload.(event.RebaseRequired).Manual {
			t.Errorf("a request logged as automatic: %+v", ev)
		}
	}
}

// PerformRebase rebases at the boundary and says so; a conflict changes
// nothing, is logged, and pauses the task when configured.
func TestPerformRebase(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.PauseOnConflict = true
	e := newWatchEnv(t, cfg)
	ok, wok := e.task(task.Running, "b.txt")
	bad, wbad := e.task(task.Running, "a.txt")
	e.write(wok.Path, "b.txt", "ok's work\n")
	e.write(wbad.Path, "a.txt", "bad's work\n")
	main := e.commit(e.repo, "x", map[string]string{"a.txt": "main's\n"})
	ctx := context.Background()

	r := e.w.PerformRebase(ctx, ok)
	if r.Outcome != "rebased" || r.Pause != "" || !strings.Contains(r.Text, "carried over") {
		t.Fatalf("ok: %+v", r)
	}
	if head := e.git(wok.Path, "rev-parse", "HEAD"); head != main || e.read(wok.Path, "b.txt") != "ok's work\n" {
		t.Errorf("ok after the rebase: HEAD %s (want %s), b.txt %q", head, main, e.read(wok.Path, "b.txt"))
	}
	before := e.git(wbad.Path, "rev-parse", "HEAD")
	r = e.w.PerformRebase(ctx, bad)
	if r.Outcome != "conflict" || r.Pause == "" || !strings.Contains(r.Text, "a.txt") || !strings.Contains(r.Text, "Nothing was changed") {
		t.Fatalf("bad: %+v", r)
	}
	if head := e.git(wbad.Path, "rev-parse", "HEAD"); head != before || e.read(wbad.Path, "a.txt") != "bad's work\n" {
		t.Errorf("bad after the conflict: HEAD %s (want %s), a.txt %q", head, before, e.read(wbad.Path, "a.txt"))
	}
	conf := e.events(event.KindRebaseConflict)
	if len(conf) != 1 {
		t.Fatalf("%d conflict events", len(conf))
	}
	if p := conf[0].Payload.(event.RebaseConflict); !slices.Equal(p.Files, []string{"a.txt"}) || !p.Predicted || !p.Paused {
		t.Errorf("conflict event %+v", p)
	}
	if done := e.events(event.KindRebaseCompleted); len(done) != 1 || done[0].TaskID != ok.ID {
		t.Errorf("completed events %+v", done)
	}
	// Again: up to date.
	if r := e.w.PerformRebase(ctx, ok); r.Outcome != "up_to_date" {
		t.Errorf("second rebase: %+v", r)
	}
	// A worktree not on its branch is refused with the reason.
	e.git(wok.Path, "checkout", "-q", "--detach")
	if r := e.w.PerformRebase(ctx, ok); r.Outcome != "failed" || !strings.Contains(r.Text, "detached HEAD") {
		t.Errorf("detached: %+v", r)
	}
}

// Files a task changes after the watcher first looked count for the
// forecast: a change read incrementally makes main's commit related.
func TestFilesReadAsTheyChange(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	a, _ := e.task(task.Running) // nothing changed yet
	e.cycle()
	e.changed(a.ID, "a.txt")
	e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
	e.cycle()
	got := e.taken()
	if len(got) != 1 || got[0].TaskID != a.ID || !strings.Contains(got[0].Text, "files you changed too (a.txt)") {
		t.Fatalf("notices %+v, want one to %s naming a.txt", got, a.ID)
	}
}
