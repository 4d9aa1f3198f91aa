package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// fakeGit knows one task, t-4k2x9, with a worktree, an open merge entry and
// a branch behind main. Any other reference is not found, "running" names a
// task the queue (and a rebase) refuses, "broken" fails, and "amb" is
// ambiguous.
type fakeGit struct {
	// idle makes the rebase routes see no task branch at all.
	idle bool

	mu      sync.Mutex
	recents []int // guarded by mu
}

var (
	sampleWorktree = api.Worktree{
		TaskID: "t-4k2x9", Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Base: "main", BaseCommit: "0123456789abcdef",
		Path: "/src/.neuraphage-worktrees/t-4k2x9", State: api.WorktreeActive, Port: 41000, CreatedAt: t0, UpdatedAt: t0,
		Exists: true, Changed: []string{"a.go"}, Untracked: []string{"notes.txt"}, Tip: "fedcba9876543210", Ahead: 2, Behind: 1,
	}
	sampleEntry = api.MergeEntry{ID: 7, TaskID: "t-4k2x9", Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Target: "main",
		State: api.MergeQueued, Attempts: 1, EnqueuedAt: t0, UpdatedAt: t0}
	sampleRebaseStatus = api.RebaseStatus{
		Watcher: api.MainWatcher{Enabled: true, Urgency: "helpful", Watching: true, LastCycle: &t0, Cycles: 3, Notices: 1,
			Repos: []api.MainRef{{Repo: "/src/app", Main: "main", Commit: "abcdef0123456789"}}},
		Tasks: []api.TaskRebase{{TaskID: "t-4k2x9", Status: task.Running, Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Main: "main",
			MainCommit: "abcdef0123456789", Behind: 2, Ahead: 1, NewCommits: []string{"fix the parser"}, Forecast: "conflict",
			Conflicts: []string{"a.go"}, State: "notified", LastNotice: &t0, LastNoticeMain: "abcdef0123456789"}},
	}
	sampleRebase = api.RebaseRequest{TaskID: "t-4k2x9", Outcome: "requested", Note: "rebases at its next tool boundary", Behind: 2, Main: "main"}
)

func (f *fakeGit) resolve(ref string) (task.ID, error) {
	switch ref {
	case "4k2", "t-4k2x9":
		return "t-4k2x9", nil
	case "running":
		return "", &server.RefusedError{Err: errors.New("task t-running is running; its work is enqueued for merge when it completes")}
	case "broken":
		return "", errors.New("disk on fire")
	case "amb":
		return "", &store.AmbiguousError{Ref: "amb"}
	}
	return "", fmt.Errorf("task %q: %w", ref, store.ErrNotFound)
}

func (f *fakeGit) Worktrees(context.Context) ([]api.Worktree, error) {
	return []api.Worktree{sampleWorktree, {Repo: "/src/app", Path: "/tmp/x", Branch: "neuraphage/t-zzzzz", State: api.WorktreeActive, Exists: true, Stray: true}}, nil
}

func (f *fakeGit) Worktree(_ context.Context, ref string) (api.Worktree, error) {
	if _, err := f.resolve(ref); err != nil {
		return api.Worktree{}, err
	}
	return sampleWorktree, nil
}

func (f *fakeGit) PruneWorktrees(context.Context) ([]api.PruneResult, error) {
	return nil, nil
}

func (f *fakeGit) PruneArchives(context.Context, time.Duration) ([]api.ArchivePruneResult, error) {
	return nil, nil
}

func (f *fakeGit) RestoreWorktree(ctx context.Context, ref string) (api.Worktree, error) {
	return f.Worktree(ctx, ref)
}

func (f *fakeGit) MergeStatus(_ context.Context, recent int) (api.MergeStatus, error) {
	f.mu.Lock()
	f.recents = append(f.recents, recent)
	f.mu.Unlock()
	return api.MergeStatus{Open: []api.MergeEntry{sampleEntry}}, nil
}

func (f *fakeGit) entry(ref string) (api.MergeEntry, error) {
	if _, err := f.resolve(ref); err != nil {
		return api.MergeEntry{}, err
	}
	return sampleEntry, nil
}

func (f *fakeGit) MergeEnqueue(_ context.Context, ref string) (api.MergeEntry, error) {
	return f.entry(ref)
}

func (f *fakeGit) MergeRetry(_ context.Context, ref string) (api.MergeEntry, error) {
	return f.entry(ref)
}

func (f *fakeGit) MergeCancel(_ context.Context, ref, reason string) (api.MergeEntry, error) {
	e, err := f.entry(ref)
	e.State, e.Detail = api.MergeCancelled, reason
	return e, err
}

func (f *fakeGit) RebaseStatus(context.Context) (api.RebaseStatus, error) {
	if f.idle {
		return api.RebaseStatus{Watcher: api.MainWatcher{Urgency: "helpful"}}, nil
	}
	return sampleRebaseStatus, nil
}

func (f *fakeGit) RebaseTask(_ context.Context, ref string) (api.RebaseRequest, error) {
	if _, err := f.resolve(ref); err != nil {
		return api.RebaseRequest{}, err
	}
	return sampleRebase, nil
}

func (f *fakeGit) RebaseAll(context.Context) ([]api.RebaseRequest, error) {
	if f.idle {
		return nil, nil
	}
	return []api.RebaseRequest{sampleRebase, {TaskID: "t-7abcd", Outcome: "refused", Note: "task t-7abcd cannot be rebased: its branch is missing"}}, nil
}

// serveHandler runs h on a Unix socket and returns a client for it.
func serveHandler(t *testing.T, h http.Handler) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(h)
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	c := client.New(sock)
	t.Cleanup(c.Close)
	return c
}

func gitServer(g server.Git) *server.Server {
	return server.New(server.Config{Git: g, Logger: slog.New(slog.DiscardHandler)})
}

func TestGitRoutes(t *testing.T) {
	t.Parallel()
	cancelled := sampleEntry
	cancelled.State, cancelled.Detail = api.MergeCancelled, "not now"
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     any // the decoded answer, for a 2xx
		code                     api.ErrorCode
		msg                      string // a part of the error message
	}{
		{name: "list", method: "GET", path: "/v1/worktrees", status: 200, want: &api.WorktreeList{Worktrees: []api.Worktree{sampleWorktree,
			{Repo: "/src/app", Path: "/tmp/x", Branch: "neuraphage/t-zzzzz", State: api.WorktreeActive, Exists: true, Stray: true}}}},
		{name: "info", method: "GET", path: "/v1/worktrees/4k2", status: 200, want: &sampleWorktree},
		{name: "info unknown", method: "GET", path: "/v1/worktrees/zzz", status: 404, code: api.CodeNotFound, msg: "not found"},
		{name: "info ambiguous", method: "GET", path: "/v1/worktrees/amb", status: 400, code: api.CodeInvalid},
		{name: "info broken", method: "GET", path: "/v1/worktrees/broken", status: 500, code: api.CodeInternal, msg: "disk on fire"},
		{name: "prune", method: "POST", path: "/v1/worktrees/prune", status: 200, want: &api.PruneReport{Results: []api.PruneResult{}}},
		{name: "restore", method: "POST", path: "/v1/worktrees/t-4k2x9/restore", status: 200, want: &sampleWorktree},
		{name: "restore refused", method: "POST", path: "/v1/worktrees/running/restore", status: 409, code: api.CodeConflict, msg: "is running"},
		{name: "status", method: "GET", path: "/v1/merge", status: 200, want: &api.MergeStatus{Open: []api.MergeEntry{sampleEntry}, Recent: []api.MergeEntry{}}},
		{name: "status bad recent", method: "GET", path: "/v1/merge?recent=-1", status: 400, code: api.CodeInvalid, msg: "recent must be"},
		{name: "enqueue", method: "POST", path: "/v1/merge/4k2/enqueue", status: 200, want: &sampleEntry},
		{name: "enqueue refused", method: "POST", path: "/v1/merge/running/enqueue", status: 409, code: api.CodeConflict,
			msg: "task t-running is running; its work is enqueued for merge when it completes"},
		{name: "enqueue unknown", method: "POST", path: "/v1/merge/zzz/enqueue", status: 404, code: api.CodeNotFound, msg: "not found"},
		{name: "retry", method: "POST", path: "/v1/merge/4k2/retry", status: 200, want: &sampleEntry},
		{name: "cancel", method: "POST", path: "/v1/merge/4k2/cancel", body: `{"reason":"not now"}`, status: 200, want: &cancelled},
		{name: "cancel bad body", method: "POST", path: "/v1/merge/4k2/cancel", body: `{"why":1}`, status: 400, code: api.CodeInvalid},
		{name: "rebase status", method: "GET", path: "/v1/rebase", status: 200, want: &sampleRebaseStatus},
		{name: "rebase task", method: "POST", path: "/v1/tasks/4k2/rebase", status: 200, want: &sampleRebase},
		{name: "rebase refused", method: "POST", path: "/v1/tasks/running/rebase", status: 409, code: api.CodeConflict,
			msg: "task t-running is running; its work is enqueued for merge when it completes"},
		{name: "rebase unknown", method: "POST", path: "/v1/tasks/zzz/rebase", status: 404, code: api.CodeNotFound, msg: "not found"},
		{name: "rebase ambiguous", method: "POST", path: "/v1/tasks/amb/rebase", status: 400, code: api.CodeInvalid},
		{name: "rebase broken", method: "POST", path: "/v1/tasks/broken/rebase", status: 500, code: api.CodeInternal, msg: "disk on fire"},
		{name: "rebase all", method: "POST", path: "/v1/rebase", status: 200, want: &[]api.RebaseRequest{sampleRebase,
			{TaskID: "t-7abcd", Outcome: "refused", Note: "task t-7abcd cannot be rebased: its branch is missing"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			gitServer(&fakeGit{}).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.want != nil {
				got := newOf(tt.want)
				if err := json.Unmarshal(rec.Body.Bytes(), got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				return
			}
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("decoding %q: %v", rec.Body, err)
			}
			if e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v; want %s with %q", e, tt.code, tt.msg)
			}
			if tt.code == api.CodeNotFound && e.Hint == "" {
				t.Errorf("error %+v has no hint", e)
			}
		})
	}
}

// newOf returns a new zero value of the type v points to.
func newOf(v any) any {
	switch v.(type) {
	case *api.WorktreeList:
		return &api.WorktreeList{}
	case *api.Worktree:
		return &api.Worktree{}
	case *api.PruneReport:
		return &api.PruneReport{}
	case *api.MergeStatus:
		return &api.MergeStatus{}
	case *api.MergeEntry:
		return &api.MergeEntry{}
	case *api.RebaseStatus:
		return &api.RebaseStatus{}
	case *api.RebaseRequest:
		return &api.RebaseRequest{}
	case *[]api.RebaseRequest:
		return &[]api.RebaseRequest{}
	}
	panic(fmt.Sprintf("newOf %T", v))
}

func TestGitRoutesWithoutGit(t *testing.T) {
	t.Parallel()
	s := server.New(server.Config{Logger: slog.New(slog.DiscardHandler)})
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/worktrees"}, {"GET", "/v1/worktrees/4k2"}, {"POST", "/v1/worktrees/prune"}, {"POST", "/v1/worktrees/4k2/restore"},
		{"GET", "/v1/merge"}, {"POST", "/v1/merge/4k2/enqueue"}, {"POST", "/v1/merge/4k2/retry"}, {"POST", "/v1/merge/4k2/cancel"},
		{"GET", "/v1/rebase"}, {"POST", "/v1/rebase"}, {"POST", "/v1/tasks/4k2/rebase"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(r.method, r.path, nil))
		var e api.Error
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusServiceUnavailable || e.Code != api.CodeUnavailable ||
			!strings.Contains(e.Message, "without worktrees") || e.Hint == "" {
			t.Errorf("%s %s: %d %s; want 503 unavailable with a message and a hint", r.method, r.path, rec.Code, rec.Body)
		}
	}
}

// TestRebaseRoutesWithNothingWatched: no task branch is an empty list, not
// null, so that clients can range over it.
func TestRebaseRoutesWithNothingWatched(t *testing.T) {
	t.Parallel()
	s := gitServer(&fakeGit{idle: true})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/rebase", nil))
	var st struct {
		Watcher struct {
			Repos json.RawMessage `json:"repos"`
		} `json:"watcher"`
		Tasks json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || rec.Code != http.StatusOK ||
		string(st.Tasks) != "[]" || string(st.Watcher.Repos) != "[]" {
		t.Errorf("GET /v1/rebase: %d %s (%v); want 200 with empty tasks and repos", rec.Code, rec.Body, err)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/rebase", nil))
	if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusOK || got != "[]" {
		t.Errorf("POST /v1/rebase: %d %s; want 200 []", rec.Code, got)
	}
}

func TestMergeStatusRecent(t *testing.T) {
	t.Parallel()
	f := &fakeGit{}
	s := gitServer(f)
	for _, q := range []string{"", "?recent=0", "?recent=50"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/merge"+q, nil))
		if rec.Code != 200 {
			t.Fatalf("%q: %d %s", q, rec.Code, rec.Body)
		}
	}
	if diff := cmp.Diff([]int{20, 0, 50}, f.recents); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
}

// TestGitThroughTheClient runs the routes over a socket with the client.
func TestGitThroughTheClient(t *testing.T) {
	t.Parallel()
	f := &fakeGit{}
	c := serveHandler(t, gitServer(f))
	ctx := context.Background()
	ws, err := c.Worktrees(ctx)
	if err != nil || len(ws) != 2 || !ws[1].Stray {
		t.Errorf("Worktrees: %+v, %v", ws, err)
	}
	w, err := c.Worktree(ctx, "4k2")
	if err != nil || !cmp.Equal(w, sampleWorktree) {
		t.Errorf("Worktree: %+v, %v", w, err)
	}
	if res, err := c.PruneWorktrees(ctx); err != nil || len(res) != 0 {
		t.Errorf("PruneWorktrees: %+v, %v", res, err)
	}
	if w, err := c.RestoreWorktree(ctx, "t-4k2x9"); err != nil || w.TaskID != "t-4k2x9" {
		t.Errorf("RestoreWorktree: %+v, %v", w, err)
	}
	if st, err := c.MergeStatus(ctx, 5); err != nil || len(st.Open) != 1 || len(st.Recent) != 0 {
		t.Errorf("MergeStatus: %+v, %v", st, err)
	}
	if e, err := c.MergeEnqueue(ctx, "4k2"); err != nil || !cmp.Equal(e, sampleEntry) {
		t.Errorf("MergeEnqueue: %+v, %v", e, err)
	}
	if e, err := c.MergeRetry(ctx, "4k2"); err != nil || e.ID != 7 {
		t.Errorf("MergeRetry: %+v, %v", e, err)
	}
	if e, err := c.MergeCancel(ctx, "4k2", "not now"); err != nil || e.State != api.MergeCancelled || e.Detail != "not now" {
		t.Errorf("MergeCancel: %+v, %v", e, err)
	}
	_, err = c.MergeEnqueue(ctx, "running")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code() != api.CodeConflict || ce.Status != http.StatusConflict {
		t.Errorf("MergeEnqueue of a running task: %v; want a conflict", err)
	}
	if st, err := c.RebaseStatus(ctx); err != nil || !cmp.Equal(st, sampleRebaseStatus) {
		t.Errorf("RebaseStatus: %+v, %v", st, err)
	}
	if r, err := c.RebaseTask(ctx, "4k2"); err != nil || r != sampleRebase {
		t.Errorf("RebaseTask: %+v, %v", r, err)
	}
	if rs, err := c.RebaseAll(ctx); err != nil || len(rs) != 2 || rs[1].Outcome != "refused" {
		t.Errorf("RebaseAll: %+v, %v", rs, err)
	}
	_, err = c.RebaseTask(ctx, "running")
	if !errors.As(err, &ce) || ce.Code() != api.CodeConflict || !strings.Contains(ce.Error(), "is running") {
		t.Errorf("RebaseTask of a refused task: %v; want a conflict with the reason", err)
	}
	_, err = c.RebaseTask(ctx, "zzz")
	if !errors.As(err, &ce) || ce.Code() != api.CodeNotFound || !strings.Contains(ce.Body.Hint, "neuraphage rebase status") {
		t.Errorf("RebaseTask of an unknown task: %v (%+v); want not found with the rebase hint", err, ce)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if diff := cmp.Diff([]int{5}, f.recents); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
}
