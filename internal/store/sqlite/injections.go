package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Enqueue implements store.Store.
// The typed fields are stored in the attrs column's JSON under the names
// they had as plain attributes ("urgency", "outcome"), so that the rows of
// earlier versions read the same and no migration is needed.
func (s *Store) Enqueue(ctx context.Context, inj inject.Injection, record func(inject.Injection) []event.Event) (inject.Injection, []event.Event, error) {
	if inj.CreatedAt.IsZero() {
		inj.CreatedAt = time.Now().UTC()
	}
	if inj.Kind == "" {
		inj.Kind = inject.Message
	}
	inj.Quiet = false // a wish for Inject, not stored
	attrs, err := encodeAttrs(inj.AttrMap())
	if err != nil {
		return inject.Injection{}, nil, fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		if err := w.enqueue(&inj, attrs); err != nil {
			return err
		}
		if record == nil {
			return nil
		}
		return w.emit(record(inj)...)
	}, false)
	if err != nil {
		return inject.Injection{}, nil, err
	}
	return inj, evs, nil
}

// EnqueueMany implements store.Store: one operation of the writer, so
// one commit and one publish of its events.
func (s *Store) EnqueueMany(ctx context.Context, injs []inject.Injection, record func(int, inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, []event.Event, error) {
	now := time.Now().UTC()
	out := make([]store.Enqueued, len(injs))
	attrs := make([]any, len(injs))
	for i, inj := range injs {
		if inj.CreatedAt.IsZero() {
			inj.CreatedAt = now
		}
		if inj.Kind == "" {
			inj.Kind = inject.Message
		}
		inj.Quiet = false
		a, err := encodeAttrs(inj.AttrMap())
		if err != nil {
			return nil, nil, fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
		}
		out[i].Injection, attrs[i] = inj, a
	}
	committed, err := s.do(ctx, func(w *wtx) error {
		if err := w.emit(evs...); err != nil {
			return err
		}
		for i := range out {
			e := &out[i]
			e.Err = nil // the writer may run an operation again
			if err := w.enqueue(&e.Injection, attrs[i]); err != nil {
				var fe *task.FinishedError
				if errors.As(err, &fe) || errors.Is(err, store.ErrNotFound) {
					e.Err = err // refused before anything was written
					continue
				}
				return err
			}
			if record != nil {
				if err := w.emit(record(i, e.Injection)...); err != nil {
					return err
				}
			}
		}
		return nil
	}, false)
	if err != nil {
		return nil, nil, err
	}
	return out, committed, nil
}

// enqueue inserts inj (ID set on return) unless its task takes nothing:
// unknown, finished or Closing. The refusal writes nothing.
func (w *wtx) enqueue(inj *inject.Injection, attrs any) error {
	t, err := w.readTask(inj.TaskID)
	if err != nil {
		return err
	}
	if t.Status.Terminal() || t.Closing {
		return &task.FinishedError{ID: t.ID, Status: t.Status, Closing: t.Closing && !t.Status.Terminal()}
	}
	res, err := w.exec(`INSERT INTO injections (task_id, source, kind, attrs, text, urgent, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		string(inj.TaskID), string(inj.Source), string(inj.Kind), attrs, inj.Text, boolInt(inj.Urgent), inj.CreatedAt.UnixNano())
	if err != nil {
		return fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
	}
	if inj.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("queueing a message for %s: %w", inj.TaskID, err)
	}
	return nil
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

// Pending implements store.Store. It is where a stored injection is parsed,
// once: the kind column into an inject.Kind, the attrs column into the
// typed fields and the free-form rest.
func (s *Store) Pending(ctx context.Context, id task.ID) ([]inject.Injection, error) {
	gen := s.queues.gen.Load() // before the query: a write racing it is seen next time
	if s.queues.isEmpty(id, gen) {
		return nil, nil
	}
	out, err := s.readInjections(ctx, id, `SELECT id, task_id, source, kind, attrs, text, urgent, created_at, returned_at FROM injections
		WHERE task_id = ? AND delivered_at IS NULL AND returned_at IS NULL ORDER BY id`)
	if err == nil && len(out) == 0 {
		s.queues.readEmpty(id, gen)
	}
	return out, err
}

// Returned implements store.Store.
func (s *Store) Returned(ctx context.Context, id task.ID) ([]inject.Injection, error) {
	return s.readInjections(ctx, id, `SELECT id, task_id, source, kind, attrs, text, urgent, created_at, returned_at FROM injections
		WHERE task_id = ? AND returned_at IS NOT NULL ORDER BY id`)
}

// readInjections reads the injections of task id that query selects.
func (s *Store) readInjections(ctx context.Context, id task.ID, query string) ([]inject.Injection, error) {
	rows, err := s.reads.QueryContext(ctx, query, string(id))
	if err != nil {
		return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
	}
	defer rows.Close()
	var out []inject.Injection
	for rows.Next() {
		var (
			inj          inject.Injection
			source, kind string
			attrs        sql.NullString
			urgent       int
			created      int64
			returned     sql.NullInt64
		)
		if err := rows.Scan(&inj.ID, &inj.TaskID, &source, &kind, &attrs, &inj.Text, &urgent, &created, &returned); err != nil {
			return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
		}
		if returned.Valid {
			at := fromNanos(returned.Int64)
			inj.ReturnedAt = &at
		}
		inj.Source = inject.Source(source)
		if inj.Kind, err = inject.ParseKind(kind); err != nil {
			// Only Enqueue writes the column, with a known kind; a row
			// from elsewhere is delivered as a message, as it always was.
			inj.Kind = inject.Message
		}
		if attrs.Valid {
			var m map[string]string
			if err := json.Unmarshal([]byte(attrs.String), &m); err != nil {
				return nil, fmt.Errorf("reading the queue of %s: injection %d: decoding attributes: %w", id, inj.ID, err)
			}
			inj.ParseAttrs(m)
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
			res, err := w.exec(`UPDATE injections SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL AND returned_at IS NULL`, at.UnixNano(), id)
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

// Counts implements store.Store. The task and queue counts are read again
// only when a write may have changed them (countCache); the event counts
// are the writer's.
func (s *Store) Counts(ctx context.Context) (store.Counts, error) {
	key := countKey{status: s.counts.statusGen.Load(), queues: s.queues.gen.Load()} // before the queries, as Pending
	c, ok := s.counts.get(key)
	if !ok {
		var err error
		if c, err = s.countTasks(ctx); err != nil {
			return c, err
		}
		s.counts.put(key, c)
	}
	// Kept by the writer: counting the log here scanned all of it.
	c.Events, c.LastID = s.eventRows.Load(), s.lastEventID.Load()
	return c, nil
}

// countTasks reads the task counts by status and the pending injections.
func (s *Store) countTasks(ctx context.Context) (store.Counts, error) {
	c := store.Counts{Tasks: map[task.Status]int{}}
	rows, err := s.reads.QueryContext(ctx, `SELECT status, COUNT(*) FROM tasks GROUP BY status`)
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
	if err := s.reads.QueryRowContext(ctx, `SELECT COUNT(*) FROM injections i JOIN tasks t ON t.id = i.task_id
		WHERE i.delivered_at IS NULL AND i.returned_at IS NULL AND t.status NOT IN (?, ?, ?)`, string(task.Completed), string(task.Failed), string(task.Cancelled)).Scan(&c.Pending); err != nil {
		return c, fmt.Errorf("counting queued injections: %w", err)
	}
	return c, nil
}

// holding returns the IDs of the injections waiting in task id's queue
// that hold its end back (inject.Injection.HoldsEnd).
func (w *wtx) holding(id task.ID) ([]int64, error) {
	rows, err := w.query(`SELECT id, source, kind, urgent FROM injections
		WHERE task_id = ? AND delivered_at IS NULL AND returned_at IS NULL ORDER BY id`, string(id))
	if err != nil {
		return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var (
			inj          inject.Injection
			source, kind string
			urgent       int
		)
		if err := rows.Scan(&inj.ID, &source, &kind, &urgent); err != nil {
			return nil, fmt.Errorf("reading the queue of %s: %w", id, err)
		}
		inj.Source, inj.Kind, inj.Urgent = inject.Source(source), inject.Kind(kind), urgent != 0
		if inj.HoldsEnd() {
			ids = append(ids, inj.ID)
		}
	}
	return ids, rows.Err()
}

// returnQueued takes what waits in t's queue out of it as t finishes
// (ReturnedAt), and returns the event that reports it, nil when nothing
// waited.
func (w *wtx) returnQueued(t task.Task) (*event.Event, error) {
	rows, err := w.query(`SELECT id, kind, text FROM injections WHERE task_id = ? AND delivered_at IS NULL AND returned_at IS NULL ORDER BY id`, string(t.ID))
	if err != nil {
		return nil, fmt.Errorf("returning the queue of %s: %w", t.ID, err)
	}
	p := event.TaskReturned{Status: t.Status}
	for rows.Next() {
		var (
			id         int64
			kind, text string
		)
		if err := rows.Scan(&id, &kind, &text); err != nil {
			rows.Close()
			return nil, fmt.Errorf("returning the queue of %s: %w", t.ID, err)
		}
		p.InjectionIDs = append(p.InjectionIDs, id)
		p.Kinds = append(p.Kinds, kind)
		p.Texts = append(p.Texts, words.Clip(words.FirstLine(text), 200))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("returning the queue of %s: %w", t.ID, err)
	}
	if len(p.InjectionIDs) == 0 {
		return nil, nil
	}
	for _, id := range p.InjectionIDs {
		if _, err := w.exec(`UPDATE injections SET returned_at = ? WHERE id = ?`, t.UpdatedAt.UnixNano(), id); err != nil {
			return nil, fmt.Errorf("returning the queue of %s: %w", t.ID, err)
		}
	}
	ev := event.New(t.UpdatedAt, t.ID, p)
	return &ev, nil
}
