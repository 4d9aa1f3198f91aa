package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// bulkTasks knows tasks t-00000 … t-00999; t-00007 is running (cannot be
// resumed), the rest paused.
type bulkTasks struct {
	fakeTasks
	mu      sync.Mutex
	resumed map[task.ID]string // id → reason
}

func (f *bulkTasks) Resolve(_ context.Context, ref string) (task.ID, error) {
	var n int
	if _, err := fmt.Sscanf(ref, "t-%05d", &n); err != nil || n >= 1000 || len(ref) != 7 {
		return "", fmt.Errorf("task %q: %w", ref, store.ErrNotFound)
	}
	return task.ID(ref), nil
}

func (f *bulkTasks) Resume(_ context.Context, id task.ID, reason string) (task.Task, error) {
	if id == "t-00007" {
		return task.Task{}, &task.TransitionError{ID: id, From: task.Running, To: task.Queued}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, again := f.resumed[id]; again {
		return task.Task{}, &task.TransitionError{ID: id, From: task.Queued, To: task.Queued}
	}
	f.resumed[id] = reason
	return task.Task{ID: id, Status: task.Queued}, nil
}

func TestBulkActionEachTaskOnItsOwn(t *testing.T) {
	t.Parallel()
	f := &bulkTasks{resumed: map[task.ID]string{}}
	c := serve(t, f)
	refs := make([]string, 0, 1003)
	for i := range 1000 {
		refs = append(refs, fmt.Sprintf("t-%05d", i))
	}
	refs = append(refs, "t-zzzzz", "t-00001", "t-00999")
	res, err := c.ActMany(context.Background(), refs, client.Resume, "all at once")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.resumed) != 999 {
		t.Errorf("%d tasks resumed, want 999 (all but the running one)", len(f.resumed))
	}
	for id, reason := range f.resumed {
		if reason != "all at once" {
			t.Errorf("%s resumed with reason %q", id, reason)
		}
	}
	if got := res.Failed(); got != 4 {
		t.Errorf("%d failed, want 4 (the running one, the unknown one, two named twice)", got)
	}
	for i, it := range res.Results {
		if it.Ref != refs[i] {
			t.Fatalf("result %d is for %q, want %q (the request's order)", i, it.Ref, refs[i])
		}
		if (it.Task == nil) == (it.Error == nil) {
			t.Fatalf("result %d (%s): want a task or an error, got %+v", i, it.Ref, it)
		}
	}
	want := map[int]api.ErrorCode{7: api.CodeConflict, 1000: api.CodeNotFound, 1001: api.CodeConflict, 1002: api.CodeConflict}
	for i, code := range want {
		if e := res.Results[i].Error; e == nil || e.Code != code {
			t.Errorf("result %d (%s): %+v, want %s", i, refs[i], e, code)
		}
	}
	if e := res.Results[7].Error; e == nil || !strings.Contains(e.Message, "cannot go from running to queued") {
		t.Errorf("the running task's error: %+v", e)
	}
}

func TestBulkActionRefusesBadRequests(t *testing.T) {
	t.Parallel()
	c := serve(t, &bulkTasks{resumed: map[task.ID]string{}})
	for _, tc := range []struct {
		name   string
		action client.Action
		refs   []string
		want   string
	}{
		{"unknown action", client.Action("delete"), []string{"t-00001"}, "want cancel, pause or resume"},
		{"no task", client.Resume, nil, "0 task ids: want 1 to"},
		{"an empty id", client.Resume, []string{"t-00001", " "}, "a task id is empty"},
		{"too many", client.Resume, make([]string, api.MaxBulkRefs+1), "want 1 to 10000"},
	} {
		_, err := c.ActMany(context.Background(), tc.refs, tc.action, "")
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code() != api.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want invalid: %q", tc.name, err, tc.want)
		}
	}
}
