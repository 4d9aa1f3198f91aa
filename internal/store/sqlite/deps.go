package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// AddDependency implements store.Store.
func (s *Store) AddDependency(ctx context.Context, dep task.Dependency, evs ...event.Event) ([]event.Event, error) {
	return s.do(ctx, func(w *wtx) error {
		for _, id := range []task.ID{dep.Task, dep.Blocker} {
			if err := w.taskExists(id); err != nil {
				return err
			}
		}
		var qerr error
		blockersOf := func(id task.ID) []task.ID {
			ids, err := blockers(w.ctx, w.tx, id)
			if err != nil && qerr == nil {
				qerr = err
			}
			return ids
		}
		if path, cyc := task.FindCycle(dep.Task, dep.Blocker, blockersOf); cyc {
			return &store.CycleError{Path: append([]task.ID{dep.Task}, path...)}
		}
		if qerr != nil {
			return qerr
		}
		res, err := w.exec(`INSERT OR IGNORE INTO dependencies (task_id, blocker_id, created_at) VALUES (?, ?, ?)`,
			string(dep.Task), string(dep.Blocker), nowNanos(evs))
		if err != nil {
			return fmt.Errorf("recording that %s waits for %s: %w", dep.Task, dep.Blocker, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // already recorded: nothing new to announce
		}
		return w.emit(evs...)
	}, false)
}

// nowNanos takes the time of the first event, so the row and its event agree.
func nowNanos(evs []event.Event) int64 {
	for _, e := range evs {
		if !e.Time.IsZero() {
			return e.Time.UnixNano()
		}
	}
	return 0
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func blockers(ctx context.Context, q querier, id task.ID) ([]task.ID, error) {
	rows, err := q.QueryContext(ctx, `SELECT blocker_id FROM dependencies WHERE task_id = ? ORDER BY created_at, blocker_id`, string(id))
	if err != nil {
		return nil, fmt.Errorf("reading the blockers of %s: %w", id, err)
	}
	defer rows.Close()
	var out []task.ID
	for rows.Next() {
		var b task.ID
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("reading the blockers of %s: %w", id, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Blockers implements store.Store.
func (s *Store) Blockers(ctx context.Context, id task.ID) ([]task.ID, error) {
	return blockers(ctx, s.rdb, id)
}

// Readiness implements store.Store.
func (s *Store) Readiness(ctx context.Context, id task.ID) (task.Readiness, error) {
	rows, err := s.reads.QueryContext(ctx, `SELECT t.status FROM dependencies d JOIN tasks t ON t.id = d.blocker_id WHERE d.task_id = ?`, string(id))
	if err != nil {
		return "", fmt.Errorf("judging the readiness of %s: %w", id, err)
	}
	defer rows.Close()
	var sts []task.Status
	for rows.Next() {
		var st task.Status
		if err := rows.Scan(&st); err != nil {
			return "", fmt.Errorf("judging the readiness of %s: %w", id, err)
		}
		sts = append(sts, st)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("judging the readiness of %s: %w", id, err)
	}
	return task.ReadinessOf(sts), nil
}
