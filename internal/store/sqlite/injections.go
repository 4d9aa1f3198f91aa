package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// defaultInjectionKind is the kind of an injection enqueued without one.
const defaultInjectionKind = "message"

// Enqueue implements store.Store.
func (s *Store) Enqueue(ctx context.Context, inj store.Injection, record func(store.Injection) []event.Event) (store.Injection, []event.Event, error) {
	if inj.CreatedAt.IsZero() {
		inj.CreatedAt = time.Now().UTC()
	}
	if inj.Kind == "" {
		inj.Kind = defaultInjectionKind
	}
	attrs, err := encodeAttrs(inj.Attrs)
	if err != nil {
		return store.Injection{}, nil, fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		if err := w.taskExists(inj.TaskID); err != nil {
			return err
		}
		res, err := w.exec(`INSERT INTO injections (task_id, source, kind, attrs, text, urgent, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			string(inj.TaskID), inj.Source, inj.Kind, attrs, inj.Text, boolInt(inj.Urgent), inj.CreatedAt.UnixNano())
		if err != nil {
			return fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
		}
		if inj.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
		}
		if record == nil {
			return nil
		}
		return w.emit(record(inj)...)
	}, false)
	if err != nil {
		return store.Injection{}, nil, err
	}
	return inj, evs, nil
}

// encodeAttrs returns the attrs column for m: a JSON object, or NULL when m
// is empty.
func encodeAttrs(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding attributes: %w", err)
	}
	return string(b), nil
}

// Pending implements store.Store.
func (s *Store) Pending(ctx context.Context, id task.ID) ([]store.Injection, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, task_id, source, kind, attrs, text, urgent, created_at FROM injections
		WHERE task_id = ? AND delivered_at IS NULL ORDER BY id`, string(id))
	if err != nil {
		return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
	}
	defer rows.Close()
	var out []store.Injection
	for rows.Next() {
		var (
			inj     store.Injection
			attrs   sql.NullString
			urgent  int
			created int64
		)
		if err := rows.Scan(&inj.ID, &inj.TaskID, &inj.Source, &inj.Kind, &attrs, &inj.Text, &urgent, &created); err != nil {
			return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
		}
		if attrs.Valid {
			if err := json.Unmarshal([]byte(attrs.String), &inj.Attrs); err != nil {
				return nil, fmt.Errorf("reading the queue of %s: injection %d: decoding attributes: %w", id, inj.ID, err)
			}
		}
		inj.Urgent = urgent != 0
		inj.CreatedAt = fromNanos(created)
		out = append(out, inj)
	}
	return out, rows.Err()
}

// MarkDelivered implements store.Store.
func (s *Store) MarkDelivered(ctx context.Context, ids []int64, at time.Time, evs ...event.Event) ([]event.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.do(ctx, func(w *wtx) error {
		// One fixed statement per ID rather than an IN list of varying
		// length: the writer prepares fixed statements once.
		var n int64
		for _, id := range ids {
			res, err := w.exec(`UPDATE injections SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL`, at.UnixNano(), id)
			if err != nil {
				return fmt.Errorf("marking %d injections delivered: %w", len(ids), err)
			}
			k, _ := res.RowsAffected()
			n += k
		}
		if int(n) != len(ids) {
			return fmt.Errorf("marking injections delivered: %d of %d were unknown or already delivered: %w", len(ids)-int(n), len(ids), store.ErrNotFound)
		}
		return w.emit(evs...)
	}, false)
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context) (store.Counts, error) {
	c := store.Counts{Tasks: map[task.Status]int{}}
	rows, err := s.rdb.QueryContext(ctx, `SELECT status, COUNT(*) FROM tasks GROUP BY status`)
	if err != nil {
		return c, fmt.Errorf("counting tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			st task.Status
			n  int
		)
		if err := rows.Scan(&st, &n); err != nil {
			return c, fmt.Errorf("counting tasks: %w", err)
		}
		c.Tasks[st] = n
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("counting tasks: %w", err)
	}
	var last sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*), MAX(id) FROM events`).Scan(&c.Events, &last); err != nil {
		return c, fmt.Errorf("counting events: %w", err)
	}
	c.LastID = last.Int64
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM injections WHERE delivered_at IS NULL`).Scan(&c.Pending); err != nil {
		return c, fmt.Errorf("counting queued injections: %w", err)
	}
	return c, nil
}
