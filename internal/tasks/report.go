package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Log returns the conversation of the task ref names, the entries from
// position from on (0: all of it). A negative from is *task.InvalidError.
func (s *Service) Log(ctx context.Context, ref string, from int) (task.ID, []store.Entry, error) {
	if from < 0 {
		return "", nil, &task.InvalidError{Field: "from", Msg: fmt.Sprintf("is %d; it must be an entry number, 0 or more", from)}
	}
	id, err := s.st.ResolveTask(ctx, ref)
	if err != nil {
		return "", nil, err
	}
	// The store's errors say what it was reading.
	entries, err := s.rec.Conversation(ctx, id, from)
	if err != nil {
		return "", nil, err
	}
	return id, entries, nil
}

// Costs summarizes the cost ledger from since on (zero: all of it), for the
// task ref names or, with ref empty, for every task, grouped by by: "day",
// "task", "model", or "" for only the total (one row keyed "total"). Any other
// grouping is *task.InvalidError.
func (s *Service) Costs(ctx context.Context, ref, by string, since time.Time) ([]store.CostRow, error) {
	if !validGrouping(by) {
		return nil, &task.InvalidError{Field: "by", Msg: fmt.Sprintf("%q is not a grouping; want day, task, model or watcher", by)}
	}
	q := store.CostQuery{Since: since, By: by}
	if ref != "" {
		id, err := s.st.ResolveTask(ctx, ref)
		if err != nil {
			return nil, err
		}
		q.TaskID = id
	}
	return s.rec.Costs(ctx, q)
}

func validGrouping(by string) bool {
	switch by {
	case "", "day", "task", "model", "watcher":
		return true
	}
	return false
}
