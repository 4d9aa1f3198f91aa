package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The git part of the suite: the worktree registry and the merge queue.

func worktreeOf(id task.ID, repo string, created time.Time) store.Worktree {
	return store.Worktree{
		TaskID: id, Repo: repo, Branch: "neuraphage/" + string(id) + "/work", Base: "main", BaseCommit: "b0b0b0",
		Path: repo + "/.neuraphage/worktrees/" + string(id), State: store.WorktreeActive,
		CreatedAt: created, UpdatedAt: created,
	}
}

func worktreeCreated(wt store.Worktree) event.Event {
	return event.New(wt.CreatedAt, wt.TaskID, event.WorktreeCreated{
		Repo: wt.Repo, Path: wt.Path, Branch: wt.Branch, Base: wt.Base, BaseCommit: wt.BaseCommit, Port: wt.Port,
	})
}

// mergeOf is an entry for id's branch into main of repo, with the times the
// store would set left zero.
func mergeOf(id task.ID, repo string) store.MergeEntry {
	return store.MergeEntry{TaskID: id, Repo: repo, Branch: "neuraphage/" + string(id) + "/work", Target: "main"}
}

func queued(m store.MergeEntry) []event.Event {
	return []event.Event{event.New(t0, m.TaskID, event.MergeQueued{Entry: m.ID, Branch: m.Branch, Target: m.Target})}
}

func mustEnqueueMerge(t *testing.T, s store.Store, m store.MergeEntry) store.MergeEntry {
	t.Helper()
	got, _, err := s.EnqueueMerge(context.Background(), m, queued)
	if err != nil {
		t.Fatalf("EnqueueMerge(%s): %v", m.TaskID, err)
	}
	return got
}

// closeMerge is a mutation moving an entry to a closed state.
func closeMerge(to store.MergeState, at time.Time) store.MergeMutation {
	return func(m *store.MergeEntry) ([]event.Event, error) {
		m.State = to
		m.FinishedAt = &at
		var p event.Payload
		switch to {
		case store.MergeLanded:
			m.Commit = "c0ffee"
			p = event.MergeLanded{Entry: m.ID, Target: m.Target, Commit: m.Commit, Strategy: "rebase"}
		case store.MergePR:
			m.PRURL = "https://example.com/pr/1"
			p = event.PROpened{Entry: m.ID, Branch: m.Branch, Target: m.Target, URL: m.PRURL}
		case store.MergeSentBack:
			m.Files = []string{"auth.go"}
			p = event.MergeConflicted{Entry: m.ID, Target: m.Target, Files: m.Files, SentBack: true}
		case store.MergeParked:
			p = event.MergeParked{Entry: m.ID, Reason: "gate failed twice"}
		default:
			p = event.MergeCancelled{Entry: m.ID, Reason: "the task was cancelled"}
		}
		return []event.Event{event.New(at, m.TaskID, p)}, nil
	}
}

// between checks that got is within [from, to].
func between(t *testing.T, what string, got, from, to time.Time) {
	t.Helper()
	if got.Before(from) || got.After(to) {
		t.Errorf("%s = %v, want the time of the call (between %v and %v)", what, got, from, to)
	}
}

func testWorktrees(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b, c := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil), newTask(t, "t-ccccc", "c", nil)
	for _, tk := range []task.Task{a, b, c} {
		mustCreate(t, s, tk)
	}
	if _, err := s.GetWorktree(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetWorktree(no record) error = %v, want ErrNotFound", err)
	}
	if got, err := s.ListWorktrees(ctx, ""); err != nil || len(got) != 0 {
		t.Errorf("ListWorktrees(empty registry) = %v, %v; want nothing", got, err)
	}

	// Every field round-trips.
	full := store.Worktree{
		TaskID: a.ID, Repo: "/src/one", Branch: "neuraphage/t-aaaaa", Base: "develop", BaseCommit: "0123456789abcdef",
		Path: "/src/one/.neuraphage/worktrees/t-aaaaa", State: store.WorktreeRemoved, Port: 41234,
		Archive: "refs/neuraphage/archive/t-aaaaa", Landed: "fedcba9876543210", LandedTip: "00aa11bb22cc",
		Note: "setup failed: npm ci exited 1", CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Hour),
	}
	evs, err := s.PutWorktree(ctx, full, worktreeCreated(full))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID != 4 || evs[0].Kind != event.KindWorktreeCreated {
		t.Errorf("PutWorktree events = %+v, want one worktree.created with id 4", evs)
	}
	got, err := s.GetWorktree(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, got); diff != "" {
		t.Errorf("GetWorktree (-want +got):\n%s", diff)
	}

	// Replacing without a creation time keeps the stored one; the update
	// time is the store's when zero.
	replaced := full
	replaced.State, replaced.Archive, replaced.Note, replaced.Port = store.WorktreeActive, "", "", 0
	replaced.CreatedAt, replaced.UpdatedAt = time.Time{}, time.Time{}
	before := time.Now()
	if _, err := s.PutWorktree(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got, err = s.GetWorktree(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	between(t, "UpdatedAt of a replaced record", got.UpdatedAt, before, after)
	replaced.CreatedAt, replaced.UpdatedAt = full.CreatedAt, got.UpdatedAt
	if diff := cmp.Diff(replaced, got); diff != "" {
		t.Errorf("replaced record (-want +got):\n%s", diff)
	}
	// A creation time given replaces the stored one.
	replaced.CreatedAt = t0.Add(2 * time.Second)
	if _, err := s.PutWorktree(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetWorktree(ctx, a.ID); err != nil || !got.CreatedAt.Equal(replaced.CreatedAt) {
		t.Errorf("CreatedAt after a replace that sets it = %v, %v; want %v", got.CreatedAt, err, replaced.CreatedAt)
	}

	// A new record without times gets the time of the call.
	fresh := worktreeOf(c.ID, "/src/two", time.Time{})
	before = time.Now()
	if _, err := s.PutWorktree(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	after = time.Now()
	got, err = s.GetWorktree(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	between(t, "CreatedAt of a new record", got.CreatedAt, before, after)
	between(t, "UpdatedAt of a new record", got.UpdatedAt, before, after)
	fresh.CreatedAt = t0 // before a's and b's, whatever the clock says
	if _, err := s.PutWorktree(ctx, fresh); err != nil {
		t.Fatal(err)
	}

	// An unknown task has no record, and the events offered with it are
	// not committed.
	n := len(rec.events())
	ghost := worktreeOf("t-zzzzz", "/src/one", t0)
	if _, err := s.PutWorktree(ctx, ghost, worktreeCreated(ghost)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutWorktree(unknown task) error = %v, want ErrNotFound", err)
	}
	if _, err := s.GetWorktree(ctx, ghost.TaskID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetWorktree after a refused put error = %v, want ErrNotFound", err)
	}
	if k := len(rec.events()); k != n {
		t.Errorf("a refused PutWorktree published %d events", k-n)
	}

	// Lists: by creation time, then task ID; one repository or all.
	// b's and z's records tie with a's: the task ID decides, not the order
	// of insertion.
	z := newTask(t, "t-00000", "z", nil)
	mustCreate(t, s, z)
	wb := worktreeOf(b.ID, "/src/one", t0.Add(2*time.Second))
	wz := worktreeOf(z.ID, "/src/one", t0.Add(2*time.Second))
	for _, wt := range []store.Worktree{wb, wz} {
		if _, err := s.PutWorktree(ctx, wt); err != nil {
			t.Fatal(err)
		}
	}
	list := func(repo string) []task.ID {
		t.Helper()
		wts, err := s.ListWorktrees(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]task.ID, len(wts))
		for i, wt := range wts {
			ids[i] = wt.TaskID
		}
		return ids
	}
	for _, tc := range []struct {
		repo string
		want []task.ID
	}{
		{"", []task.ID{c.ID, z.ID, a.ID, b.ID}},
		{"/src/one", []task.ID{z.ID, a.ID, b.ID}},
		{"/src/two", []task.ID{c.ID}},
		{"/src/none", []task.ID{}},
	} {
		if diff := cmp.Diff(tc.want, list(tc.repo)); diff != "" {
			t.Errorf("ListWorktrees(%q) (-want +got):\n%s", tc.repo, diff)
		}
	}
	wts, err := s.ListWorktrees(ctx, "/src/one")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Worktree{wz, replaced, wb}, wts); diff != "" {
		t.Errorf("ListWorktrees records (-want +got):\n%s", diff)
	}

	// The committed events are in the log and were published, in order.
	logged, err := s.ReadEvents(ctx, event.Query{Filter: event.Filter{Kinds: []string{"worktree"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, logged); diff != "" {
		t.Errorf("logged worktree events (-want +got):\n%s", diff)
	}
	var published []event.Event
	for _, e := range rec.events() {
		if strings.HasPrefix(string(e.Kind), "worktree.") {
			published = append(published, e)
		}
	}
	if diff := cmp.Diff(evs, published); diff != "" {
		t.Errorf("published worktree events (-want +got):\n%s", diff)
	}
}

func testMergeEnqueue(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, a)
	mustCreate(t, s, b)

	// The store sets the ID, the times and the state, and record sees the ID.
	var recorded []store.MergeEntry
	record := func(m store.MergeEntry) []event.Event {
		recorded = append(recorded, m)
		return queued(m)
	}
	before := time.Now()
	m, evs, err := s.EnqueueMerge(ctx, mergeOf(a.ID, "/src/one"), record)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if m.ID <= 0 || m.State != store.MergeQueued {
		t.Errorf("EnqueueMerge = %+v, want an ID and state queued", m)
	}
	between(t, "EnqueuedAt", m.EnqueuedAt, before, after)
	between(t, "UpdatedAt", m.UpdatedAt, before, after)
	if diff := cmp.Diff([]store.MergeEntry{m}, recorded); diff != "" {
		t.Errorf("record saw (-want +got):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID != 3 || evs[0].Payload.(event.MergeQueued).Entry != m.ID {
		t.Errorf("EnqueueMerge events = %+v, want merge.queued of entry %d with id 3", evs, m.ID)
	}
	got, err := s.GetMerge(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("GetMerge (-returned +stored):\n%s", diff)
	}
	if _, err := s.GetMerge(ctx, m.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetMerge(unknown) error = %v, want ErrNotFound", err)
	}

	// Every field round-trips.
	started, finished := t0.Add(time.Minute), t0.Add(2*time.Minute)
	full := store.MergeEntry{
		TaskID: b.ID, Repo: "/src/two", Branch: "neuraphage/t-bbbbb", Target: "release", State: store.MergeWaiting,
		Detail: "the checkout of release has uncommitted changes", Files: []string{"a.go", "dir/b.go"}, Attempts: 3,
		Commit: "c0ffee", PRURL: "https://example.com/pr/7", EnqueuedAt: t0, UpdatedAt: t0.Add(time.Hour),
		StartedAt: &started, FinishedAt: &finished,
	}
	fm, _, err := s.EnqueueMerge(ctx, full, nil)
	if err != nil {
		t.Fatal(err)
	}
	full.ID = fm.ID
	if diff := cmp.Diff(full, fm); diff != "" {
		t.Errorf("EnqueueMerge returned (-want +got):\n%s", diff)
	}
	if got, err := s.GetMerge(ctx, fm.ID); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(full, got); diff != "" {
		t.Errorf("GetMerge of a full entry (-want +got):\n%s", diff)
	}
	if fm.ID <= m.ID {
		t.Errorf("second entry's ID %d is not above the first's %d", fm.ID, m.ID)
	}

	// Refusals commit nothing.
	n := len(rec.events())
	if _, _, err := s.EnqueueMerge(ctx, mergeOf("t-zzzzz", "/src/one"), queued); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("EnqueueMerge(unknown task) error = %v, want ErrNotFound", err)
	}
	_, _, err = s.EnqueueMerge(ctx, mergeOf(a.ID, "/src/one"), queued)
	if !errors.Is(err, store.ErrExists) {
		t.Errorf("second open entry error = %v, want ErrExists", err)
	} else if msg := err.Error(); !strings.Contains(msg, string(a.ID)) || !strings.Contains(msg, fmt.Sprint(m.ID)) {
		t.Errorf("second open entry error %q does not name the task and the open entry %d", msg, m.ID)
	}
	if k := len(rec.events()); k != n {
		t.Errorf("refused EnqueueMerge calls published %d events", k-n)
	}
	if open, err := s.ListMerges(ctx, store.MergeQuery{TaskID: a.ID}); err != nil || len(open) != 1 {
		t.Errorf("entries of %s after the refusal = %v, %v; want the first only", a.ID, open, err)
	}

	// Once the open entry is closed, whichever way, the task may queue again.
	prev := m
	for i, to := range []store.MergeState{store.MergeLanded, store.MergeSentBack, store.MergeParked, store.MergeCancelled, store.MergePR} {
		if _, _, err := s.UpdateMerge(ctx, prev.ID, closeMerge(to, t0.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatalf("closing entry %d as %s: %v", prev.ID, to, err)
		}
		next, _, err := s.EnqueueMerge(ctx, mergeOf(a.ID, "/src/one"), queued)
		if err != nil {
			t.Fatalf("EnqueueMerge after entry %d went %s: %v", prev.ID, to, err)
		}
		if next.ID <= prev.ID {
			t.Errorf("entry ID %d after %d: IDs must grow", next.ID, prev.ID)
		}
		prev = next
	}
	// A waiting entry and a running one are open too.
	for _, st := range []store.MergeState{store.MergeRunning, store.MergeWaiting} {
		if _, _, err := s.UpdateMerge(ctx, prev.ID, func(m *store.MergeEntry) ([]event.Event, error) {
			m.State = st
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.EnqueueMerge(ctx, mergeOf(a.ID, "/src/one"), queued); !errors.Is(err, store.ErrExists) {
			t.Errorf("EnqueueMerge while the entry is %s error = %v, want ErrExists", st, err)
		}
	}
	// Another task is not in the way: b's entry is open, a's too, and c may queue.
	c := newTask(t, "t-ccccc", "c", nil)
	mustCreate(t, s, c)
	mustEnqueueMerge(t, s, mergeOf(c.ID, "/src/one"))
}

// refusal is a mutation's own error type, which UpdateMerge must return as is.
type refusal struct{ why string }

func (r *refusal) Error() string { return "refused: " + r.why }

func testMergeUpdate(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk) // event 1
	m0 := mergeOf(tk.ID, "/src/one")
	m0.EnqueuedAt, m0.UpdatedAt = t0, t0
	m := mustEnqueueMerge(t, s, m0) // event 2

	// The mutation's change and its events are committed together.
	started := t0.Add(time.Minute)
	before := time.Now()
	got, evs, err := s.UpdateMerge(ctx, m.ID, func(e *store.MergeEntry) ([]event.Event, error) {
		e.State, e.Attempts, e.StartedAt, e.Detail = store.MergeRunning, e.Attempts+1, &started, "rebasing onto main"
		return []event.Event{event.New(started, e.TaskID, event.MergeStarted{Entry: e.ID, Target: e.Target, TargetCommit: "abc", Attempt: e.Attempts})}, nil
	})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	want := m
	want.State, want.Attempts, want.StartedAt, want.Detail = store.MergeRunning, 1, &started, "rebasing onto main"
	// UpdatedAt is the store's: the mutation left it.
	between(t, "UpdatedAt after a mutation that left it", got.UpdatedAt, before, after)
	want.UpdatedAt = got.UpdatedAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateMerge returned (-want +got):\n%s", diff)
	}
	if stored, err := s.GetMerge(ctx, m.ID); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("stored entry differs from returned (-returned +stored):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID != 3 || evs[0].Kind != event.KindMergeStarted {
		t.Fatalf("UpdateMerge events = %+v, want merge.started with id 3", evs)
	}
	logged, err := s.ReadEvents(ctx, event.Query{AfterID: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, logged); diff != "" {
		t.Errorf("logged events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(evs, rec.events()[2:]); diff != "" {
		t.Errorf("published events (-want +got):\n%s", diff)
	}

	// A mutation that sets UpdatedAt keeps it.
	stamp := t0.Add(3 * time.Hour)
	got, _, err = s.UpdateMerge(ctx, m.ID, func(e *store.MergeEntry) ([]event.Event, error) {
		e.UpdatedAt = stamp
		return nil, nil
	})
	if err != nil || !got.UpdatedAt.Equal(stamp) {
		t.Errorf("UpdatedAt set by the mutation = %v, %v; want %v", got.UpdatedAt, err, stamp)
	}
	want = got

	// A failing mutation changes nothing and commits none of its events;
	// its error comes back as it was.
	_, _, err = s.UpdateMerge(ctx, m.ID, func(e *store.MergeEntry) ([]event.Event, error) {
		e.State, e.Detail, e.Files = store.MergeLanded, "changed", []string{"x"}
		return []event.Event{event.New(t0, e.TaskID, event.MergeLanded{Entry: e.ID})}, &refusal{"not today"}
	})
	var r *refusal
	if !errors.As(err, &r) || r.why != "not today" {
		t.Errorf("failing mutation error = %v, want the *refusal it returned", err)
	}
	if stored, err := s.GetMerge(ctx, m.ID); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("a failed mutation changed the entry (-want +got):\n%s", diff)
	}
	if _, _, err := s.UpdateMerge(ctx, m.ID+100, closeMerge(store.MergeCancelled, t0)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateMerge(unknown) error = %v, want ErrNotFound", err)
	}

	// IDs stay dense after failures.
	finished := t0.Add(time.Hour)
	got, evs, err = s.UpdateMerge(ctx, m.ID, closeMerge(store.MergeLanded, finished))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID != 4 {
		t.Errorf("events after failed updates = %+v, want one with id 4", evs)
	}
	if got.State != store.MergeLanded || got.Commit != "c0ffee" || got.FinishedAt == nil || !got.FinishedAt.Equal(finished) {
		t.Errorf("landed entry = %+v", got)
	}
	if n := len(rec.events()); n != 4 {
		t.Errorf("published %d events, want 4", n)
	}
	// Clearing a field clears it.
	got, _, err = s.UpdateMerge(ctx, m.ID, func(e *store.MergeEntry) ([]event.Event, error) {
		e.StartedAt, e.FinishedAt, e.Detail, e.Files = nil, nil, "", nil
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stored, err := s.GetMerge(ctx, m.ID); err != nil {
		t.Fatal(err)
	} else if stored.StartedAt != nil || stored.FinishedAt != nil || stored.Detail != "" || stored.Files != nil {
		t.Errorf("cleared fields read back as %+v", stored)
	} else if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("stored entry differs from returned (-returned +stored):\n%s", diff)
	}
}
