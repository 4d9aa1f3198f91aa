package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

func scanTask(r scanner) (task.Task, error) {
	var data []byte
	if err := r.Scan(&data); err != nil {
		return task.Task{}, err
	}
	var t task.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return task.Task{}, fmt.Errorf("decoding a stored task: %w", err)
	}
	return t, nil
}

// taskArgs returns the column values of t in the order id, status, priority,
// parent_id, created_at, updated_at, data.
func taskArgs(t task.Task) ([]any, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	return []any{string(t.ID), string(t.Status), t.Priority, nullString(string(t.ParentID)),
		t.CreatedAt.UnixNano(), t.UpdatedAt.UnixNano(), string(data)}, nil
}

// CreateTask implements store.Store.
func (s *Store) CreateTask(ctx context.Context, t task.Task, evs ...event.Event) ([]event.Event, error) {
	args, err := taskArgs(t)
	if err != nil {
		return nil, err
	}
	return s.do(ctx, func(w *wtx) error {
		if t.ParentID != "" {
			var n int
			if err := w.queryRow(`SELECT COUNT(*) FROM tasks WHERE id = ?`, string(t.ParentID)).Scan(&n); err != nil {
				return fmt.Errorf("checking parent task %s: %w", t.ParentID, err)
			}
			if n == 0 {
				return fmt.Errorf("parent task %s: %w", t.ParentID, store.ErrNotFound)
			}
		}
		res, err := w.exec(`INSERT OR IGNORE INTO tasks (id, status, priority, parent_id, created_at, updated_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, args...)
		if err != nil {
			return fmt.Errorf("inserting task %s: %w", t.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("creating task %s: %w", t.ID, store.ErrExists)
		}
		return w.emit(evs...)
	}, false)
}

// UpdateTask implements store.Store.
func (s *Store) UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error) {
	var out task.Task
	evs, err := s.do(ctx, func(w *wtx) error {
		t, err := w.readTask(id)
		if err != nil {
			return err
		}
		if err := w.applyMutation(&t, m); err != nil {
			return err
		}
		out = t
		return nil
	}, false)
	if err != nil {
		return task.Task{}, nil, err
	}
	return out, evs, nil
}

// readTask reads task id inside the write transaction; a missing task is
// store.ErrNotFound.
func (w *wtx) readTask(id task.ID) (task.Task, error) {
	t, err := scanTask(w.queryRow(`SELECT data FROM tasks WHERE id = ?`, string(id)))
	if isNoRows(err) {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	return t, nil
}

// taskExists returns store.ErrNotFound (wrapped) unless task id exists.
func (w *wtx) taskExists(id task.ID) error {
	var n int
	if err := w.queryRow(`SELECT COUNT(*) FROM tasks WHERE id = ?`, string(id)).Scan(&n); err != nil {
		return fmt.Errorf("checking task %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// applyMutation applies m to t, as read by readTask, stores the result and
// emits m's events. On error *t may be half changed and the operation must
// fail.
func (w *wtx) applyMutation(t *task.Task, m store.Mutation) error {
	id, from, closing := t.ID, t.Status, t.Closing
	evs, err := m(t)
	if err != nil {
		return err
	}
	if t.ID != id {
		return fmt.Errorf("updating task %s: a mutation may not change the id", id)
	}
	if t.Closing && !closing {
		ids, err := w.holding(id)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			return &store.PendingError{ID: id, Pending: ids}
		}
	}
	if t.Status.Terminal() && !from.Terminal() {
		ev, err := w.returnQueued(*t)
		if err != nil {
			return err
		}
		if ev != nil {
			evs = append(evs, *ev)
		}
	}
	args, err := taskArgs(*t)
	if err != nil {
		return err
	}
	if _, err := w.exec(`UPDATE tasks SET status = ?, priority = ?, parent_id = ?, created_at = ?,
		updated_at = ?, data = ? WHERE id = ?`, append(args[1:], args[0])...); err != nil {
		return fmt.Errorf("updating task %s: %w", id, err)
	}
	return w.emit(evs...)
}

// GetTask implements store.Store.
func (s *Store) GetTask(ctx context.Context, id task.ID) (task.Task, error) {
	t, err := scanTask(s.rdb.QueryRowContext(ctx, `SELECT data FROM tasks WHERE id = ?`, string(id)))
	if isNoRows(err) {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	return t, nil
}

// ResolveTask implements store.Store.
func (s *Store) ResolveTask(ctx context.Context, ref string) (task.ID, error) {
	norm, err := task.NormalizeRef(ref)
	if err != nil {
		return "", err
	}
	// IDs are lower-case ASCII, so a prefix is a range: [norm, norm+"\x7f").
	rows, err := s.rdb.QueryContext(ctx, `SELECT id FROM tasks WHERE id >= ? AND id < ? ORDER BY id LIMIT 6`, norm, norm+"\x7f")
	if err != nil {
		return "", fmt.Errorf("looking up task %q: %w", ref, err)
	}
	defer rows.Close()
	var ids []task.ID
	for rows.Next() {
		var id task.ID
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("looking up task %q: %w", ref, err)
		}
		if string(id) == norm {
			return id, nil
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("looking up task %q: %w", ref, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("task %s: %w", norm, store.ErrNotFound)
	case 1:
		return ids[0], nil
	}
	return "", &store.AmbiguousError{Ref: ref, Matches: ids}
}

// listQuery builds the query for opts, selecting the data column.
func listQuery(opts store.ListOptions) (string, []any) {
	var (
		where []string
		args  []any
	)
	if len(opts.Statuses) > 0 {
		ph := make([]string, len(opts.Statuses))
		for i, st := range opts.Statuses {
			ph[i] = "?"
			args = append(args, string(st))
		}
		where = append(where, "status IN ("+strings.Join(ph, ",")+")")
	}
	if opts.ParentID != "" {
		where = append(where, "parent_id = ?")
		args = append(args, string(opts.ParentID))
	}
	q := `SELECT data FROM tasks`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, id"
	if opts.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	return q, args
}

// ListTasks implements store.Store.
func (s *Store) ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error) {
	var out []task.Task
	err := s.eachTask(ctx, opts, func(data []byte) error {
		var t task.Task
		if err := json.Unmarshal(data, &t); err != nil {
			return fmt.Errorf("decoding a stored task: %w", err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// ListTasksJSON implements store.Store: the stored JSON of each task, joined
// into an array with one task per line, never decoded.
func (s *Store) ListTasksJSON(ctx context.Context, opts store.ListOptions) (json.RawMessage, error) {
	// One task per line: readable, greppable, and free to produce.
	var buf bytes.Buffer
	buf.WriteString("[\n")
	n := 0
	err := s.eachTask(ctx, opts, func(data []byte) error {
		if n > 0 {
			buf.WriteString(",\n")
		}
		n++
		buf.Write(data)
		return nil
	})
	if n > 0 {
		buf.WriteByte('\n')
	}
	buf.WriteByte(']')
	return buf.Bytes(), err
}

func (s *Store) eachTask(ctx context.Context, opts store.ListOptions, fn func([]byte) error) error {
	q, args := listQuery(opts)
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	var data []byte
	for rows.Next() {
		if err := rows.Scan(&data); err != nil {
			return fmt.Errorf("listing tasks: %w", err)
		}
		if err := fn(data); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing tasks: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
