package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// More of the merge queue's part of the suite: listing, concurrent
// enqueues, and the git records across a reopen and after Close.

func testMergeList(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	ids := &fixedIDs{}
	var tasks []task.ID
	for range 5 {
		tk := newTask(t, ids.next(), "t", nil)
		mustCreate(t, s, tk)
		tasks = append(tasks, tk.ID)
	}
	// 1: t1 one/main landed; 2: t1 one/main queued; 3: t2 one/dev running;
	// 4: t3 two/main waiting; 5: t4 two/main cancelled; 6: t5 one/main queued.
	add := func(id task.ID, repo, target string, closeAs store.MergeState) int64 {
		t.Helper()
		m := mergeOf(id, repo)
		m.Target = target
		e := mustEnqueueMerge(t, s, m)
		if closeAs != "" {
			if _, _, err := s.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
				m.State = closeAs
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return e.ID
	}
	e := []int64{
		add(tasks[0], "/one", "main", store.MergeLanded),
		add(tasks[0], "/one", "main", ""),
		add(tasks[1], "/one", "dev", store.MergeRunning),
		add(tasks[2], "/two", "main", store.MergeWaiting),
		add(tasks[3], "/two", "main", store.MergeCancelled),
		add(tasks[4], "/one", "main", ""),
	}
	for _, tc := range []struct {
		name string
		q    store.MergeQuery
		want []int64
	}{
		{"all", store.MergeQuery{}, e},
		{"task", store.MergeQuery{TaskID: tasks[0]}, []int64{e[0], e[1]}},
		{"task open", store.MergeQuery{TaskID: tasks[0], Open: true}, []int64{e[1]}},
		{"task none", store.MergeQuery{TaskID: "t-zzzzz"}, []int64{}},
		{"open", store.MergeQuery{Open: true}, []int64{e[1], e[2], e[3], e[5]}},
		{"repo", store.MergeQuery{Repo: "/two"}, []int64{e[3], e[4]}},
		{"target", store.MergeQuery{Target: "main"}, []int64{e[0], e[1], e[3], e[4], e[5]}},
		{"queue", store.MergeQuery{Repo: "/one", Target: "main"}, []int64{e[0], e[1], e[5]}},
		{"open queue", store.MergeQuery{Repo: "/one", Target: "main", Open: true}, []int64{e[1], e[5]}},
		{"limit keeps the newest", store.MergeQuery{Limit: 2}, []int64{e[4], e[5]}},
		{"limit with a filter", store.MergeQuery{Open: true, Limit: 3}, []int64{e[2], e[3], e[5]}},
		{"limit above the count", store.MergeQuery{Repo: "/two", Limit: 10}, []int64{e[3], e[4]}},
	} {
		got, err := s.ListMerges(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		gotIDs := make([]int64, len(got))
		for i, m := range got {
			gotIDs[i] = m.ID
			if tc.q.Open && !m.State.Open() {
				t.Errorf("%s: entry %d is %s, not open", tc.name, m.ID, m.State)
			}
		}
		if diff := cmp.Diff(tc.want, gotIDs); diff != "" {
			t.Errorf("ListMerges(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
	// Listed entries are the stored ones.
	all, err := s.ListMerges(ctx, store.MergeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		got, err := s.GetMerge(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, m); diff != "" {
			t.Errorf("listed entry %d differs from GetMerge (-get +list):\n%s", m.ID, diff)
		}
	}
}

func testMergeConcurrentEnqueue(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	const workers = 16
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		won              []store.MergeEntry
		refused, otherEr int
	)
	start := make(chan struct{})
	for range workers {
		wg.Go(func() {
			<-start
			m, _, err := s.EnqueueMerge(ctx, mergeOf(tk.ID, "/src/one"), queued)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, m)
			case errors.Is(err, store.ErrExists):
				refused++
			default:
				otherEr++
				t.Errorf("EnqueueMerge: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(won) != 1 || refused != workers-1 || otherEr != 0 {
		t.Fatalf("concurrent EnqueueMerge: %d succeeded, %d refused with ErrExists, %d failed otherwise; want 1, %d, 0",
			len(won), refused, otherEr, workers-1)
	}
	got, err := s.ListMerges(ctx, store.MergeQuery{TaskID: tk.ID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(won, got); diff != "" {
		t.Errorf("entries after the race (-want +got):\n%s", diff)
	}
	if n := len(rec.events()); n != 2 {
		t.Errorf("published %d events, want the creation and one merge.queued", n)
	}
}

func testGitReopen(t *testing.T, open Opener) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, nil)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	wt := worktreeOf(tk.ID, "/src/one", t0)
	wt.Port, wt.Note = 40000, "recreated"
	if _, err := s.PutWorktree(ctx, wt, worktreeCreated(wt)); err != nil {
		t.Fatal(err)
	}
	closed := mustEnqueueMerge(t, s, mergeOf(tk.ID, "/src/one"))
	closed, _, err := s.UpdateMerge(ctx, closed.ID, closeMerge(store.MergeSentBack, t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	openEntry := mustEnqueueMerge(t, s, mergeOf(tk.ID, "/src/one"))
	// The step the queue began survives a restart: that is what it is for.
	openEntry, _, err = s.UpdateMerge(ctx, openEntry.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		m.Step, m.StepTip = "rebase", "0123456789abcdef0123456789abcdef01234567"
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := open(t, dir, nil)
	defer s2.Close()
	gotWT, err := s2.GetWorktree(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wt, gotWT); diff != "" {
		t.Errorf("worktree after reopen (-want +got):\n%s", diff)
	}
	got, err := s2.ListMerges(ctx, store.MergeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.MergeEntry{closed, openEntry}, got); diff != "" {
		t.Errorf("merge entries after reopen (-want +got):\n%s", diff)
	}
	// The open entry still holds the task's place, and IDs go on growing.
	if _, _, err := s2.EnqueueMerge(ctx, mergeOf(tk.ID, "/src/one"), queued); !errors.Is(err, store.ErrExists) {
		t.Errorf("EnqueueMerge after reopen error = %v, want ErrExists", err)
	}
	if _, _, err := s2.UpdateMerge(ctx, openEntry.ID, closeMerge(store.MergeCancelled, t0)); err != nil {
		t.Fatal(err)
	}
	next, _, err := s2.EnqueueMerge(ctx, mergeOf(tk.ID, "/src/one"), queued)
	if err != nil {
		t.Fatal(err)
	}
	if next.ID <= openEntry.ID {
		t.Errorf("entry ID after reopen = %d, want above %d", next.ID, openEntry.ID)
	}
}

func testGitClosed(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, t.TempDir(), nil)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	m := mustEnqueueMerge(t, s, mergeOf(tk.ID, "/src/one"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close error = %v, want ErrClosed", name, err)
		}
	}
	_, err := s.PutWorktree(ctx, worktreeOf(tk.ID, "/src/one", t0))
	check("PutWorktree", err)
	_, err = s.GetWorktree(ctx, tk.ID)
	check("GetWorktree", err)
	_, err = s.ListWorktrees(ctx, "")
	check("ListWorktrees", err)
	_, _, err = s.EnqueueMerge(ctx, mergeOf(tk.ID, "/src/one"), queued)
	check("EnqueueMerge", err)
	_, _, err = s.UpdateMerge(ctx, m.ID, closeMerge(store.MergeCancelled, t0))
	check("UpdateMerge", err)
	_, err = s.GetMerge(ctx, m.ID)
	check("GetMerge", err)
	_, err = s.ListMerges(ctx, store.MergeQuery{})
	check("ListMerges", err)
}
