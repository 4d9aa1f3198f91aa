package merge_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// notices records what the main watcher tells tasks.
type notices struct {
	mu   sync.Mutex
	injs []inject.Injection
}

func (n *notices) inject(_ context.Context, inj inject.Injection) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.injs = append(n.injs, inj)
	return nil
}

func (n *notices) forTask(id task.ID) []inject.Injection {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []inject.Injection
	for _, i := range n.injs {
		if i.TaskID == id {
			out = append(out, i)
		}
	}
	return out
}

// withMainWatcher wires the queue's Yield to a real main watcher on the
// environment's store and worktrees, whose notices go to ns.
func withMainWatcher(mw **mainwatch.Monitor) envOption {
	return func(o *merge.Options) {
		o.Yield = func(ctx context.Context, y merge.Yield) error { return (*mw).TellRebase(ctx, y.TaskID, y.Reason) }
	}
}

// lines returns n numbered lines.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// payloads returns the task's logged events of kind k.
func (e *env) payloads(id task.ID, k event.Kind) []event.Payload {
	e.t.Helper()
	evs, err := e.st.ReadEvents(e.ctx, event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{string(k)}}})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []event.Payload
	for _, ev := range evs {
		out = append(out, ev.Payload)
	}
	return out
}

// TestOverlapSmallerLandsFirst: two ready entries change the same lines of
// shared.txt; the larger was queued first. The smaller lands first; the
// larger, which then conflicts with main, is not sent back as a failure:
// its entry yields, its task is told to rebase through the main watcher's
// notice and runs again; once rebased and completed it lands after the
// smaller. Without a main watcher the queue tells it itself.
func TestOverlapSmallerLandsFirst(t *testing.T) {
	for _, watcher := range []bool{true, false} {
		t.Run(fmt.Sprintf("main_watcher=%v", watcher), func(t *testing.T) {
			t.Parallel()
			var mw *mainwatch.Monitor
			var opts []envOption
			if watcher {
				opts = append(opts, withMainWatcher(&mw))
			}
			e := newMergeEnv(t, merge.Config{MaxSendBacks: 1}, opts...)
			ns := &notices{}
			mw = mainwatch.New(mainwatch.Options{Store: e.st, Worktrees: e.wt, Config: mainwatch.Config{Enabled: true}, Inject: ns.inject})

			large, lw := e.newTask("rewrite the shared code at length")
			e.commitOn(lw.Path, "large change", map[string]string{"shared.txt": "line 1\nline 2 the large way\nline 3\n", "big.txt": lines("big", 40)})
			small, sw := e.newTask("fix one line of the shared code")
			e.commitOn(sw.Path, "small change", map[string]string{"shared.txt": "line 1\nline 2 the small way\nline 3\n"})
			e.complete(large.ID, "large")
			e.complete(small.ID, "small")
			e.start()

			landed := e.waitState(small.ID, store.MergeLanded)
			y := e.waitState(large.ID, store.MergeYielded)
			e.waitTask(large.ID, task.Queued)
			if got := e.read(e.repo, "shared.txt"); got != "line 1\nline 2 the small way\nline 3\n" {
				t.Errorf("main's shared.txt = %q, want the small change", got)
			}
			if !slices.Equal(y.Files, []string{"shared.txt"}) || !strings.Contains(y.Detail, string(small.ID)) {
				t.Errorf("yielded entry: files %q, detail %q", y.Files, y.Detail)
			}
			for _, m := range e.entries(large.ID) {
				if m.State == store.MergeSentBack || m.State == store.MergeParked {
					t.Errorf("the larger entry was %s: %+v", m.State, m)
				}
			}
			ord := e.payloads(large.ID, event.KindMergeOrdered)
			if len(ord) != 1 {
				t.Fatalf("merge.ordered on the larger task = %+v, want one", ord)
			}
			if o := ord[0].(event.MergeOrdered); o.After != string(small.ID) || !slices.Equal(o.Files, []string{"shared.txt"}) || o.Lines <= o.AfterLines {
				t.Errorf("merge.ordered = %+v", o)
			}
			if p := e.payloads(small.ID, event.KindMergeOrdered); len(p) != 0 {
				t.Errorf("the smaller task has merge.ordered events: %+v", p)
			}
			yl := e.payloads(large.ID, event.KindMergeYielded)
			if len(yl) != 1 {
				t.Fatalf("merge.yielded = %+v, want one", yl)
			}
			by := "merge_queue"
			if watcher {
				by = "main_watcher"
			}
			if got := yl[0].(event.MergeYielded); got.After != string(small.ID) || got.Notice != by || !slices.Equal(got.Conflicts, []string{"shared.txt"}) {
				t.Errorf("merge.yielded = %+v, want told by %s", got, by)
			}

			// What the larger task is told.
			queueMsgs, watcherMsgs := e.inj.forTask(large.ID), ns.forTask(large.ID)
			var text string
			if watcher {
				if len(queueMsgs) != 0 || len(watcherMsgs) != 1 {
					t.Fatalf("the larger task got %d queue and %d watcher messages, want 0 and 1: %+v %+v", len(queueMsgs), len(watcherMsgs), queueMsgs, watcherMsgs)
				}
				n := watcherMsgs[0]
				if n.Source != inject.FromMainWatcher || n.Kind != inject.Rebase || n.Urgency != inject.Helpful || n.Attrs["reason"] != "merge_order" {
					t.Errorf("notice: source %s kind %s urgency %s attrs %v", n.Source, n.Kind, n.Urgency, n.Attrs)
				}
				text = n.Text
				for _, want := range []string{"main moved: your branch " + lw.Branch + " is 1 commit behind it", "Forecast: rebasing conflicts in shared.txt", "git merge main"} {
					if !strings.Contains(text, want) {
						t.Errorf("notice lacks %q:\n%s", want, text)
					}
				}
				if rr := e.payloads(large.ID, event.KindRebaseRequired); len(rr) != 1 {
					t.Errorf("rebase.required on the larger task = %+v, want one", rr)
				}
				// The watcher's own pass over the moved main does not tell
				// the task again.
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- mw.Run(ctx) }()
				testkit.WaitFor(t, "a pass of the main watcher", func() bool { return mw.Health().Cycles > 0 })
				cancel()
				if err := <-done; err != nil {
					t.Errorf("main watcher: %v", err)
				}
				if n := len(ns.forTask(large.ID)); n != 1 {
					t.Errorf("the larger task got %d watcher notices after its pass, want still 1: %+v", n, ns.forTask(large.ID))
				}
			} else {
				if len(queueMsgs) != 1 || queueMsgs[0].Kind != string(inject.Rebase) {
					t.Fatalf("the larger task got %+v from the queue, want one rebase message", queueMsgs)
				}
				text = queueMsgs[0].Text
				if !strings.Contains(text, "git merge main") {
					t.Errorf("message lacks the command:\n%s", text)
				}
			}
			for _, want := range []string{"landed task " + string(small.ID) + "'s smaller change first", "(shared.txt)", "conflicts with main in shared.txt", "This is not a failed merge"} {
				if !strings.Contains(text, want) {
					t.Errorf("the larger task's message lacks %q:\n%s", want, text)
				}
			}
			if len(e.inj.forTask(small.ID)) != 0 || len(ns.forTask(small.ID)) != 0 {
				t.Errorf("the smaller task was told something: %+v %+v", e.inj.forTask(small.ID), ns.forTask(small.ID))
			}

			// The larger task rebases as told and completes again: it lands
			// after the smaller.
			if out, err := gitTry(lw.Path, "rebase", "main"); err == nil {
				t.Fatalf("the rebase did not conflict: %s", out)
			}
			e.write(lw.Path, "shared.txt", "line 1\nline 2 the small way, then the large way\nline 3\n")
			e.git(lw.Path, "add", "shared.txt")
			cont := exec.Command("git", "rebase", "--continue")
			cont.Dir, cont.Env = lw.Path, append(os.Environ(), "GIT_EDITOR=true")
			if out, err := cont.CombinedOutput(); err != nil {
				t.Fatalf("rebase --continue: %v: %s", err, out)
			}
			e.move(large.ID, task.Running)
			e.complete(large.ID, "large, rebased")
			second := e.waitState(large.ID, store.MergeLanded)
			if out, err := gitTry(e.repo, "merge-base", "--is-ancestor", landed.Commit, second.Commit); err != nil {
				t.Errorf("the smaller change did not land before the larger: %s", out)
			}
			if got := e.read(e.repo, "shared.txt"); got != "line 1\nline 2 the small way, then the large way\nline 3\n" {
				t.Errorf("main's shared.txt = %q", got)
			}
		})
	}
}

// TestOverlapCleanBatchSmallerFirst: two ready entries change the same file
// in different places; the larger was queued first. Both land in one
// update of main, the smaller's commit first; nobody is told anything.
func TestOverlapCleanBatchSmallerFirst(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{MaxSendBacks: 1})
	large, lw := e.newTask("large")
	e.commitOn(lw.Path, "large change", map[string]string{"shared.txt": "line 1 large\nline 2\nline 3\n", "big.txt": lines("big", 40)})
	small, sw := e.newTask("small")
	e.commitOn(sw.Path, "small change", map[string]string{"shared.txt": "line 1\nline 2\nline 3 small\n"})
	e.complete(large.ID, "large")
	e.complete(small.ID, "small")
	e.start()
	s := e.waitState(small.ID, store.MergeLanded)
	l := e.waitState(large.ID, store.MergeLanded)
	if u := e.landUpdates(); len(u) != 1 {
		t.Errorf("updates of main = %q, want one batch", u)
	}
	if out, err := gitTry(e.repo, "merge-base", "--is-ancestor", s.Commit, l.Commit); err != nil || s.Commit == l.Commit {
		t.Errorf("the smaller did not land before the larger (%s, %s): %s", s.Commit, l.Commit, out)
	}
	if got := e.read(e.repo, "shared.txt"); got != "line 1 large\nline 2\nline 3 small\n" {
		t.Errorf("main's shared.txt = %q", got)
	}
	if ord := e.payloads(large.ID, event.KindMergeOrdered); len(ord) != 1 {
		t.Errorf("merge.ordered = %+v, want one", ord)
	}
	if len(e.inj.forTask(large.ID))+len(e.inj.forTask(small.ID)) != 0 {
		t.Errorf("a task was told something: %+v %+v", e.inj.forTask(large.ID), e.inj.forTask(small.ID))
	}
}

// TestNoOverlapKeepsFIFO: ready entries that share no file land in queue
// order, the larger first when it was queued first; no ordering event.
func TestNoOverlapKeepsFIFO(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{MaxSendBacks: 1})
	large, lw := e.newTask("large")
	e.commitOn(lw.Path, "large change", map[string]string{"big.txt": lines("big", 40)})
	small, sw := e.newTask("small")
	e.commitOn(sw.Path, "small change", map[string]string{"small.txt": "small\n"})
	e.complete(large.ID, "large")
	e.complete(small.ID, "small")
	e.start()
	l := e.waitState(large.ID, store.MergeLanded)
	s := e.waitState(small.ID, store.MergeLanded)
	if out, err := gitTry(e.repo, "merge-base", "--is-ancestor", l.Commit, s.Commit); err != nil || s.Commit == l.Commit {
		t.Errorf("the first queued did not land first (%s, %s): %s", l.Commit, s.Commit, out)
	}
	for _, id := range []task.ID{large.ID, small.ID} {
		if ord := e.payloads(id, event.KindMergeOrdered); len(ord) != 0 {
			t.Errorf("merge.ordered on %s: %+v", id, ord)
		}
	}
}

// TestOverlapOtherConflictIsASendBack: the larger entry, ordered after a
// smaller one changing the same file, conflicts with main in another file
// (one main changed on its own): that conflict is its own, an ordinary
// send-back, not a yield.
func TestOverlapOtherConflictIsASendBack(t *testing.T) {
	t.Parallel()
	var mw *mainwatch.Monitor
	e := newMergeEnv(t, merge.Config{MaxSendBacks: 1}, withMainWatcher(&mw))
	ns := &notices{}
	mw = mainwatch.New(mainwatch.Options{Store: e.st, Worktrees: e.wt, Config: mainwatch.Config{Enabled: true}, Inject: ns.inject})
	large, lw := e.newTask("large")
	e.commitOn(lw.Path, "large change", map[string]string{"shared.txt": "line 1 large\nline 2\nline 3\n", "mine.txt": lines("large", 40)})
	small, sw := e.newTask("small")
	e.commitOn(sw.Path, "small change", map[string]string{"shared.txt": "line 1\nline 2\nline 3 small\n"})
	e.commitOn(e.repo, "main's own mine.txt", map[string]string{"mine.txt": "main's\n"})
	e.complete(large.ID, "large")
	e.complete(small.ID, "small")
	e.start()
	e.waitState(small.ID, store.MergeLanded)
	m := e.waitState(large.ID, store.MergeSentBack)
	if !slices.Equal(m.Files, []string{"mine.txt"}) {
		t.Errorf("sent back for %q, want mine.txt", m.Files)
	}
	if ord := e.payloads(large.ID, event.KindMergeOrdered); len(ord) != 1 {
		t.Errorf("merge.ordered = %+v, want one", ord)
	}
	if y := e.payloads(large.ID, event.KindMergeYielded); len(y) != 0 {
		t.Errorf("merge.yielded = %+v, want none", y)
	}
	if got := e.inj.forTask(large.ID); len(got) != 1 || !strings.Contains(got[0].Text, "could not land") {
		t.Errorf("queue messages = %+v, want the send-back", got)
	}
	if n := len(ns.forTask(large.ID)); n != 0 {
		t.Errorf("the main watcher told the task %d times, want 0", n)
	}
}
