package workflow

import (
	"context"
	"fmt"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// fakeStore holds tasks by ID and keeps the events appended.
type fakeStore struct {
	tasks map[task.ID]task.Task
	evs   []event.Event
}

func (f *fakeStore) GetTask(_ context.Context, id task.ID) (task.Task, error) {
	t, ok := f.tasks[id]
	if !ok {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return t, nil
}

func (f *fakeStore) ListTasks(context.Context, store.ListOptions) ([]task.Task, error) {
	return nil, nil
}

func (f *fakeStore) AppendEvents(_ context.Context, evs ...event.Event) ([]event.Event, error) {
	f.evs = append(f.evs, evs...)
	return evs, nil
}

// TestPhaseRules: a phase works in its workflow task's worktree (its start
// recorded there) and its completion is the workflow's; any other task
// works in its own and completes elsewhere.
func TestPhaseRules(t *testing.T) {
	t.Parallel()
	wf := task.Task{ID: "t-wf001", Workflow: []task.Phase{{Name: "build", Personas: []string{"mid"}}}}
	phase := task.Task{ID: "t-ph001", ParentID: wf.ID, Persona: "mid", Phase: &task.PhaseRef{Index: 0, Name: "build"}}
	plain := task.Task{ID: "t-pl001", ParentID: wf.ID}
	st := &fakeStore{tasks: map[task.ID]task.Task{wf.ID: wf, phase.ID: phase, plain.ID: plain}}
	s := New(Options{Store: st})
	ctx := context.Background()

	if got, err := s.WorkTask(ctx, phase); err != nil || got.ID != wf.ID {
		t.Errorf("WorkTask(phase) = %s, %v; want the workflow task", got.ID, err)
	}
	if len(st.evs) != 1 || st.evs[0].TaskID != wf.ID || st.evs[0].Kind != event.KindPhaseStarted {
		t.Errorf("events %+v; want one phase start on the workflow task", st.evs)
	}
	if got, err := s.WorkTask(ctx, plain); err != nil || got.ID != plain.ID {
		t.Errorf("WorkTask(plain) = %s, %v; want itself", got.ID, err)
	}
	orphan := phase
	orphan.ParentID = "t-gone0"
	if _, err := s.WorkTask(ctx, orphan); err == nil {
		t.Error("WorkTask of a phase whose workflow is gone succeeded")
	}
	if s.Completed(ctx, plain.ID, "done") {
		t.Error("Completed took a task that is not a phase")
	}
	if s.Completed(ctx, "t-zzzzz", "done") {
		t.Error("Completed took an unknown task")
	}
}
