package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// defaultEventLimit caps ReadEvents when the query sets no limit.
const defaultEventLimit = 10_000

// AppendEvents implements store.Store.
func (s *Store) AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	return s.do(ctx, func(w *wtx) error { return w.emit(evs...) }, false)
}

// EmitEvents implements store.Store.
func (s *Store) EmitEvents(ctx context.Context, evs ...event.Event) error {
	if len(evs) == 0 {
		return nil
	}
	for _, e := range evs {
		if e.Transient() {
			return fmt.Errorf("emitting a %s event: transient events are not logged", e.Kind)
		}
	}
	enc, err := encodeEvents(evs)
	if err != nil {
		return err
	}
	_, err = s.do(ctx, func(w *wtx) error { return w.emitEncoded(enc) }, true)
	return err
}

// ReadEvents implements store.Store.
func (s *Store) ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error) {
	where := []string{"id > ?"}
	args := []any{q.AfterID}
	if q.TaskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, string(q.TaskID))
	}
	if !q.Since.IsZero() {
		where = append(where, "time >= ?")
		args = append(args, q.Since.UnixNano())
	}
	if len(q.Kinds) > 0 {
		var ors []string
		for _, k := range q.Kinds {
			ors = append(ors, "kind = ? OR kind LIKE ? ESCAPE '\\'")
			args = append(args, k, escapeLike(k)+".%")
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultEventLimit
	}
	rows, err := s.reads.QueryContext(ctx, `SELECT id, time, kind, task_id, data FROM events WHERE `+
		strings.Join(where, " AND ")+" ORDER BY id LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	var out []event.Event
	for rows.Next() {
		var (
			e      event.Event
			nanos  int64
			kind   string
			taskID sql.NullString
			data   sql.NullString
		)
		if err := rows.Scan(&e.ID, &nanos, &kind, &taskID, &data); err != nil {
			return nil, fmt.Errorf("reading events: %w", err)
		}
		e.Time = fromNanos(nanos)
		e.Kind = event.Kind(kind)
		e.TaskID = task.ID(taskID.String)
		p, err := event.DecodePayload(e.Kind, []byte(data.String))
		if err != nil {
			return nil, fmt.Errorf("reading event %d: %w", e.ID, err)
		}
		e.Payload = p
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}

func escapeLike(s string) string { return likeEscaper.Replace(s) }

// likeEscaper is built once: building one per query was most of the
// allocation of reading a task's recent events.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// LastEventID implements store.Store.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.reads.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("reading the last event id: %w", err)
	}
	return id, nil
}

// PruneEvents implements store.Store.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	_, err := s.do(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM events WHERE time < ?`, before.UnixNano())
		if err != nil {
			return fmt.Errorf("pruning events before %s: %w", before.Format(time.RFC3339), err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if n > 0 {
			// Pruning is rare; counting what is left keeps Counts exact.
			var t eventTally
			if err := w.queryRow(`SELECT COUNT(*), COALESCE(MAX(id), 0) FROM events`).Scan(&t.rows, &t.last); err != nil {
				return fmt.Errorf("counting events after pruning: %w", err)
			}
			w.recount = &t
		}
		return nil
	}, false)
	return n, err
}
