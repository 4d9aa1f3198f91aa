package executor

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// creator stores tasks as the tasks service does, for these tests (the
// service itself imports the executor).
type creator struct {
	st     store.Store
	engine string
}

func (c creator) Create(ctx context.Context, spec task.Spec) (task.Task, error) {
	if spec.Engine == "" {
		spec.Engine = c.engine
	}
	// Random ids collide now and then (2^25 of them; a test making 400
	// tasks meets one in about 400 runs): drawn again, as the tasks
	// service does.
	for {
		id, err := task.NewID(rand.Reader)
		if err != nil {
			return task.Task{}, err
		}
		t, err := task.New(id, spec, time.Now())
		if err != nil {
			return task.Task{}, err
		}
		_, err = c.st.CreateTask(ctx, t, event.New(t.CreatedAt, t.ID, event.TaskCreated{
			Description: t.Description, Status: t.Status, Priority: t.Priority, Tags: t.Tags,
			ParentID: t.ParentID, Persona: t.Persona, Engine: t.Engine, Repo: t.Repo,
		}))
		if !errors.Is(err, store.ErrExists) {
			return t, err
		}
	}
}

func (c creator) Depend(ctx context.Context, id, blocker string) (struct{}, error) {
	_, err := c.st.AddDependency(ctx, task.Dependency{Task: task.ID(id), Blocker: task.ID(blocker)},
		event.New(time.Now(), task.ID(id), event.TaskDependency{Blocker: task.ID(blocker)}))
	return struct{}{}, err
}
