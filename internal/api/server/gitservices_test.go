package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"

	"github.com/neuraphage/neuraphage-go/internal/api/server"
)

// services are domain services that know task t-4k2x9 and refuse what
// "refuse" asks of them.
type services struct{ refuse bool }

func (s services) Resolve(_ context.Context, ref string) (task.ID, error) {
	if ref == "4k2" {
		return "t-4k2x9", nil
	}
	return "", fmt.Errorf("task %q: %w", ref, store.ErrNotFound)
}

func (s services) RequestRebase(_ context.Context, ids []task.ID, _ bool) ([]mainwatch.Request, error) {
	if s.refuse {
		return nil, &mainwatch.RefusedError{Msg: "task t-4k2x9 is completed; nothing to rebase"}
	}
	return []mainwatch.Request{{TaskID: ids[0], Outcome: "requested"}}, nil
}

func (s services) List(context.Context) ([]worktree.Info, error) { return nil, nil }
func (s services) Inspect(_ context.Context, id task.ID) (worktree.Info, error) {
	return worktree.Info{Worktree: store.Worktree{TaskID: id, Branch: "neuraphage/" + string(id)}}, nil
}
func (s services) Prune(context.Context) ([]worktree.PruneResult, error) { return nil, nil }
func (s services) PruneArchives(context.Context, time.Duration) ([]worktree.ArchivePruneResult, error) {
	return nil, nil
}
func (s services) Restore(_ context.Context, id task.ID) (store.Worktree, error) {
	if s.refuse {
		return store.Worktree{}, &worktree.RestoreRefusedError{Err: errors.New("/src/x already exists")}
	}
	return store.Worktree{TaskID: id}, nil
}

func (s services) Status(context.Context, int) (open, closed []store.MergeEntry, err error) {
	return nil, nil, nil
}
func (s services) Enqueue(_ context.Context, id task.ID) (store.MergeEntry, error) {
	if s.refuse {
		return store.MergeEntry{}, &merge.RefusedError{Err: fmt.Errorf("task %s is running", id)}
	}
	return store.MergeEntry{ID: 3, TaskID: id, State: store.MergeQueued}, nil
}
func (s services) Retry(ctx context.Context, id task.ID) (store.MergeEntry, error) {
	return s.Enqueue(ctx, id)
}
func (s services) Cancel(_ context.Context, id task.ID, _ string) (store.MergeEntry, error) {
	return store.MergeEntry{}, errors.New("disk on fire")
}

// TestNewGitMarksRefusals: the services' refusals answer 409 conflict,
// other failures 500, and records go out as wire types.
func TestNewGitMarksRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		refuse       bool
		method, path string
		status       int
		body         string // a part of the answer
	}{
		{false, "POST", "/v1/merge/4k2/enqueue", 200, `"state":"queued"`},
		{true, "POST", "/v1/merge/4k2/enqueue", 409, "task t-4k2x9 is running"},
		{true, "POST", "/v1/merge/4k2/retry", 409, "is running"},
		{false, "POST", "/v1/merge/4k2/cancel", 500, "internal"},
		{true, "POST", "/v1/worktrees/4k2/restore", 409, "already exists"},
		{false, "POST", "/v1/worktrees/4k2/restore", 200, `"branch":"neuraphage/t-4k2x9"`},
		{true, "POST", "/v1/tasks/4k2/rebase", 409, "nothing to rebase"},
		{false, "POST", "/v1/tasks/4k2/rebase", 200, `"outcome":"requested"`},
		{false, "POST", "/v1/merge/zzz/enqueue", 404, "not found"},
	}
	for _, tt := range tests {
		s := services{refuse: tt.refuse}
		h := gitServer(server.NewGit(server.GitServices{Tasks: s, Worktrees: s, Merges: s, Main: mainView{}}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s %s (refuse %v): %d %s; want %d with %q", tt.method, tt.path, tt.refuse, rec.Code, rec.Body, tt.status, tt.body)
		}
	}
}

type mainView struct{}

func (mainView) Status(context.Context) ([]mainwatch.TaskState, error) { return nil, nil }
func (mainView) Health() mainwatch.Health                              { return mainwatch.Health{} }
