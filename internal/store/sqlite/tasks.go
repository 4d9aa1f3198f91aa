package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

const taskColumns = `id, description, context, tags, priority, parent_id, persona, engine, model,
	repo, branch, worktree, status, resume_pending, close_reason,
	max_iterations, max_tokens, max_cost_usd, iterations, input_tokens, output_tokens, cost_usd,
	created_at, updated_at, started_at, finished_at`

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

func scanTask(r scanner) (task.Task, error) {
	var (
		t                 task.Task
		tags              string
		parent            sql.NullString
		resume            int
		created, updated  int64
		started, finished sql.NullInt64
	)
	err := r.Scan(&t.ID, &t.Description, &t.Context, &tags, &t.Priority, &parent, &t.Persona, &t.Engine, &t.Model,
		&t.Repo, &t.Branch, &t.Worktree, &t.Status, &resume, &t.CloseReason,
		&t.Budget.MaxIterations, &t.Budget.MaxTokens, &t.Budget.MaxCostUSD,
		&t.Usage.Iterations, &t.Usage.InputTokens, &t.Usage.OutputTokens, &t.Usage.CostUSD,
		&created, &updated, &started, &finished)
	if err != nil {
		return task.Task{}, err
	}
	if tags != "" {
		t.Tags = strings.Split(tags, ",")
	}
	t.ParentID = task.ID(parent.String)
	t.ResumePending = resume != 0
	t.CreatedAt = fromNanos(created)
	t.UpdatedAt = fromNanos(updated)
	t.StartedAt = optTime(started)
	t.FinishedAt = optTime(finished)
	return t, nil
}

func taskArgs(t task.Task) ([]any, error) {
	// Tags never contain commas (task.NormalizeTags refuses them).
	tags := strings.Join(t.Tags, ",")
	return []any{string(t.ID), t.Description, t.Context, tags, t.Priority, nullString(string(t.ParentID)),
		t.Persona, t.Engine, t.Model, t.Repo, t.Branch, t.Worktree, string(t.Status), boolInt(t.ResumePending), t.CloseReason,
		t.Budget.MaxIterations, t.Budget.MaxTokens, t.Budget.MaxCostUSD,
		t.Usage.Iterations, t.Usage.InputTokens, t.Usage.OutputTokens, t.Usage.CostUSD,
		t.CreatedAt.UnixNano(), t.UpdatedAt.UnixNano(), nanosOrNil(t.StartedAt), nanosOrNil(t.FinishedAt)}, nil
}

// CreateTask implements store.Store.
func (s *Store) CreateTask(ctx context.Context, t task.Task, evs ...event.Event) ([]event.Event, error) {
	args, err := taskArgs(t)
	if err != nil {
		return nil, err
	}
	return s.do(ctx, func(w *wtx) error {
		var n int
		if err := w.tx.QueryRowContext(w.ctx, `SELECT COUNT(*) FROM tasks WHERE id = ?`, string(t.ID)).Scan(&n); err != nil {
			return fmt.Errorf("checking task id %s: %w", t.ID, err)
		}
		if n > 0 {
			return fmt.Errorf("creating task %s: %w", t.ID, store.ErrExists)
		}
		if t.ParentID != "" {
			if err := w.tx.QueryRowContext(w.ctx, `SELECT COUNT(*) FROM tasks WHERE id = ?`, string(t.ParentID)).Scan(&n); err != nil {
				return fmt.Errorf("checking parent task %s: %w", t.ParentID, err)
			}
			if n == 0 {
				return fmt.Errorf("parent task %s: %w", t.ParentID, store.ErrNotFound)
			}
		}
		if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO tasks (`+taskColumns+`)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
			return fmt.Errorf("inserting task %s: %w", t.ID, err)
		}
		return w.emit(evs...)
	}, false)
}

// UpdateTask implements store.Store.
func (s *Store) UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error) {
	var out task.Task
	evs, err := s.do(ctx, func(w *wtx) error {
		t, err := scanTask(w.tx.QueryRowContext(w.ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, string(id)))
		if isNoRows(err) {
			return fmt.Errorf("task %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reading task %s: %w", id, err)
		}
		evs, err := m(&t)
		if err != nil {
			return err
		}
		if t.ID != id {
			return fmt.Errorf("updating task %s: a mutation may not change the id", id)
		}
		args, err := taskArgs(t)
		if err != nil {
			return err
		}
		// Same column order as taskColumns, without id, then id for WHERE.
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE tasks SET description=?, context=?, tags=?, priority=?, parent_id=?,
			persona=?, engine=?, model=?, repo=?, branch=?, worktree=?, status=?, resume_pending=?, close_reason=?,
			max_iterations=?, max_tokens=?, max_cost_usd=?, iterations=?, input_tokens=?, output_tokens=?, cost_usd=?,
			created_at=?, updated_at=?, started_at=?, finished_at=? WHERE id=?`, append(args[1:], args[0])...); err != nil {
			return fmt.Errorf("updating task %s: %w", id, err)
		}
		out = t
		return w.emit(evs...)
	}, false)
	if err != nil {
		return task.Task{}, nil, err
	}
	return out, evs, nil
}

// GetTask implements store.Store.
func (s *Store) GetTask(ctx context.Context, id task.ID) (task.Task, error) {
	t, err := scanTask(s.rdb.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, string(id)))
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

// ListTasks implements store.Store.
func (s *Store) ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error) {
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
	q := `SELECT ` + taskColumns + ` FROM tasks`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, id"
	if opts.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	var out []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("listing tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func optTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

func nanosOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}
