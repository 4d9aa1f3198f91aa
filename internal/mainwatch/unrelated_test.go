package mainwatch

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// byTask returns the notices to id.
func byTask(ns []inject.Injection, id task.ID) []inject.Injection {
	var out []inject.Injection
	for _, n := range ns {
		if n.TaskID == id {
			out = append(out, n)
		}
	}
	return out
}

// Every task that fell behind is told: one whose files main changed at
// the configured urgency, one whose files it did not (or that changed
// nothing yet) with an fyi note, after the related ones. Each task gets
// one notice per main move, also across a restart; moves within the
// cooldown come as one notice when it ends.
func TestUnrelatedTasksToldOncePerMove(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	t0 := time.Now()
	e.setClock(t0)
	a, _ := e.task(task.Running, "a.txt")
	c, _ := e.task(task.Running, "c.txt")
	idle, _ := e.task(task.Running) // changed nothing yet
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("the first look told %v", noticeIDs(got))
	}
	main := e.commit(e.repo, "feat: add a helper", map[string]string{"a.txt": "1\n"})
	e.cycle()
	got := e.taken()
	if len(got) != 3 || got[0].TaskID != a.ID {
		t.Fatalf("notices = %v, want one each to %s (first), %s and %s", noticeIDs(got), a.ID, c.ID, idle.ID)
	}
	if string(got[0].Urgency) != "helpful" {
		t.Errorf("the related task's notice is %s, want helpful", got[0].Urgency)
	}
	for _, id := range []task.ID{c.ID, idle.ID} {
		ns := byTask(got, id)
		if len(ns) != 1 {
			t.Fatalf("%s got %d notices, want 1", id, len(ns))
		}
		n := ns[0]
		if n.Urgency != FYI || n.Urgent || !n.Quiet || n.Kind != inject.Rebase || n.Source != Source {
			t.Errorf("notice to %s = %+v, want a quiet fyi rebase notice", id, n)
		}
		for _, want := range []string{"1 commit behind", "feat: add a helper", "changed none of the files you changed", "No action is needed now"} {
			if !strings.Contains(n.Text, want) {
				t.Errorf("notice to %s lacks %q:\n%s", id, want, n.Text)
			}
		}
	}
	rr := e.events(event.KindRebaseRequired)
	if len(rr) != 3 {
		t.Fatalf("%d rebase.required events, want 3", len(rr))
	}
	for _, ev := range rr {
		p := ev.Payload.(event.RebaseRequired)
		if ev.TaskID != a.ID && (p.Urgency != "fyi" || p.MainCommit != main || !p.Unrelated) {
			t.Errorf("rebase.required for %s = %+v, want an unrelated fyi about %s", ev.TaskID, p, main)
		}
		if ev.TaskID == a.ID && p.Unrelated {
			t.Errorf("rebase.required for the related task %s is marked unrelated: %+v", a.ID, p)
		}
	}
	states, err := e.w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.TaskID == c.ID && (s.State != StateNotified || s.LastNoticeUrgency != FYI) {
			t.Errorf("c: %+v, want notified at fyi", s)
		}
	}

	// Once per move: not again, nor after a restart.
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a second cycle told %v again", noticeIDs(got))
	}
	e.w = e.watcher(defaults())
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a restarted watcher told %v again", noticeIDs(got))
	}

	// Two moves within the cooldown: one notice, when it ends.
	e.setClock(t0.Add(10 * time.Second))
	e.commit(e.repo, "two", map[string]string{"b.txt": "2\n"})
	e.cycle()
	e.setClock(t0.Add(20 * time.Second))
	e.commit(e.repo, "three", map[string]string{"b.txt": "3\n"})
	e.cycle()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("told %v within the cooldown", noticeIDs(got))
	}
	e.setClock(t0.Add(61 * time.Second))
	e.cycle()
	got = e.taken()
	for _, id := range []task.ID{a.ID, c.ID, idle.ID} {
		want := FYI
		if id == a.ID {
			want = Helpful // its branch still lacks main's change of a.txt
		}
		ns := byTask(got, id)
		if len(ns) != 1 || ns[0].Urgency != want || !strings.Contains(ns[0].Text, "3 commits behind") {
			t.Errorf("%s after the cooldown: %+v, want one %s notice of 3 commits", id, ns, want)
		}
	}
}

// An fyi note never interrupts: with blocking notices configured, a task
// whose files main did not touch (here one waiting for its user) gets a
// quiet, non-urgent fyi notice, which neither wakes it nor has its branch
// rebased.
func TestUnrelatedNoticeIsQuiet(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Urgency = Blocking
	e := newWatchEnv(t, cfg)
	related, _ := e.task(task.Running, "a.txt")
	waiting, _ := e.task(task.Waiting, "c.txt")
	e.cycle()
	e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
	e.cycle()
	got := e.taken()
	if ns := byTask(got, related.ID); len(ns) != 1 || ns[0].Urgency != Blocking || !ns[0].Urgent {
		t.Errorf("the related task's notices = %+v, want one urgent blocking notice", ns)
	}
	ns := byTask(got, waiting.ID)
	if len(ns) != 1 {
		t.Fatalf("the waiting task got %d notices, want 1", len(ns))
	}
	if n := ns[0]; n.Urgency != FYI || n.Urgent || !n.Quiet || strings.Contains(n.Text, "rebases your branch") {
		t.Errorf("notice to the waiting task = %+v, want a quiet fyi note", n)
	}
	if tk, err := e.st.GetTask(context.Background(), waiting.ID); err != nil || tk.Status != task.Waiting {
		t.Errorf("the waiting task is %v (%v), want still waiting", tk.Status, err)
	}
}

// An fyi note does not hold back the news that main changed a task's own
// files: the cooldown it started is no reason to wait.
func TestUnrelatedNoticeDoesNotDelayARelatedOne(t *testing.T) {
	t.Parallel()
	e := newWatchEnv(t, defaults())
	t0 := time.Now()
	e.setClock(t0)
	c, _ := e.task(task.Running, "c.txt")
	e.cycle()
	e.commit(e.repo, "one", map[string]string{"a.txt": "1\n"})
	e.cycle()
	if got := e.taken(); len(got) != 1 || got[0].Urgency != FYI {
		t.Fatalf("first move: %+v, want one fyi note", got)
	}
	e.setClock(t0.Add(5 * time.Second))
	e.commit(e.repo, "two", map[string]string{"c.txt": "2\n"})
	e.cycle()
	got := e.taken()
	if len(got) != 1 || got[0].TaskID != c.ID || got[0].Urgency != Helpful || !strings.Contains(got[0].Text, "c.txt") {
		t.Fatalf("second move, on c's file: %+v, want a helpful notice at once", got)
	}
}

// notify_unrelated: false turns the fyi notes off: the task is left in
// state unrelated, untold.
func TestUnrelatedOffWhenConfigured(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.NotifyUnrelated = false
	e := newWatchEnv(t, cfg)
	a, _ := e.task(task.Running, "a.txt")
	c, _ := e.task(task.Running, "c.txt")
	e.cycle()
	e.commit(e.repo, "x", map[string]string{"a.txt": "x\n"})
	e.cycle()
	if got := noticeIDs(e.taken()); !slices.Equal(got, []task.ID{a.ID}) {
		t.Fatalf("told %v, want only %s", got, a.ID)
	}
	states, err := e.w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.TaskID == c.ID && (s.State != StateUnrelated || s.Behind != 1 || s.LastNotice != nil) {
			t.Errorf("c: %+v, want unrelated, 1 behind, never told", s)
		}
	}
}
