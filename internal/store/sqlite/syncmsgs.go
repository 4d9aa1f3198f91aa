package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

const syncCols = `id, learning_id, source_id, task_id, urgency, relevance, score, message, reason, decided_by, state, note,
	injection_id, created_at, queued_at, delivered_at`

// AddSyncMessage implements store.Store.
func (s *Store) AddSyncMessage(ctx context.Context, m store.SyncMessage, record func(store.SyncMessage) []event.Event) (store.SyncMessage, []event.Event, error) {
	if m.CreatedAt.IsZero() {
		return store.SyncMessage{}, nil, errors.New("adding a sync message: no creation time")
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		var id int64
		err := w.queryRow(`SELECT id FROM sync_messages WHERE learning_id = ? AND task_id = ?`, m.LearningID, string(m.TaskID)).Scan(&id)
		if err == nil {
			return fmt.Errorf("learning %d was already sent to %s (sync message %d): %w", m.LearningID, m.TaskID, id, store.ErrExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res, err := w.exec(`INSERT INTO sync_messages (learning_id, source_id, task_id, urgency, relevance, score, message, reason,
			decided_by, state, note, injection_id, created_at, queued_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.LearningID, string(m.From), string(m.TaskID), m.Urgency, m.Relevance, m.Score, m.Message, m.Reason,
			m.DecidedBy, string(m.State), m.Note, m.InjectionID, m.CreatedAt.UnixNano(), nanosOrNil(m.QueuedAt), nanosOrNil(m.DeliveredAt))
		if err != nil {
			return fmt.Errorf("adding a sync message: %w", err)
		}
		if m.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if record == nil {
			return nil
		}
		return w.emit(record(m)...)
	}, false)
	if err != nil {
		return store.SyncMessage{}, nil, err
	}
	return m, evs, nil
}

// UpdateSyncMessage implements store.Store. The learning, the tasks and
// the creation time do not change.
func (s *Store) UpdateSyncMessage(ctx context.Context, id int64, mut func(*store.SyncMessage) ([]event.Event, error)) (store.SyncMessage, []event.Event, error) {
	if mut == nil {
		return store.SyncMessage{}, nil, fmt.Errorf("updating sync message %d: no mutation", id)
	}
	var out store.SyncMessage
	evs, err := s.do(ctx, func(w *wtx) error {
		m, err := scanSync(w.queryRow(`SELECT `+syncCols+` FROM sync_messages WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sync message %d: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		was := m
		evs, err := mut(&m)
		if err != nil {
			return err
		}
		if m.ID != was.ID || m.LearningID != was.LearningID || m.From != was.From || m.TaskID != was.TaskID || !m.CreatedAt.Equal(was.CreatedAt) {
			return fmt.Errorf("updating sync message %d: its id, learning, tasks and creation time do not change", id)
		}
		if _, err := w.exec(`UPDATE sync_messages SET urgency = ?, relevance = ?, score = ?, message = ?, reason = ?, decided_by = ?,
			state = ?, note = ?, injection_id = ?, queued_at = ?, delivered_at = ? WHERE id = ?`,
			m.Urgency, m.Relevance, m.Score, m.Message, m.Reason, m.DecidedBy, string(m.State), m.Note, m.InjectionID,
			nanosOrNil(m.QueuedAt), nanosOrNil(m.DeliveredAt), id); err != nil {
			return fmt.Errorf("updating sync message %d: %w", id, err)
		}
		out = m
		return w.emit(evs...)
	}, false)
	if err != nil {
		return store.SyncMessage{}, nil, err
	}
	return out, evs, nil
}

// SyncMessages implements store.Store.
func (s *Store) SyncMessages(ctx context.Context, q store.SyncQuery) ([]store.SyncMessage, error) {
	var (
		where []string
		args  []any
	)
	if q.TaskID != "" {
		where, args = append(where, "task_id = ?"), append(args, string(q.TaskID))
	}
	if q.From != "" {
		where, args = append(where, "source_id = ?"), append(args, string(q.From))
	}
	if q.LearningID != 0 {
		where, args = append(where, "learning_id = ?"), append(args, q.LearningID)
	}
	if q.InjectionID != 0 {
		where, args = append(where, "injection_id = ?"), append(args, q.InjectionID)
	}
	if len(q.States) > 0 {
		marks := make([]string, len(q.States))
		for i, st := range q.States {
			marks[i] = "?"
			args = append(args, string(st))
		}
		where = append(where, "state IN ("+strings.Join(marks, ", ")+")")
	}
	query := `SELECT ` + syncCols + ` FROM sync_messages`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	if q.Newest {
		query += " ORDER BY id DESC"
	} else {
		query += " ORDER BY id"
	}
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading sync messages: %w", err)
	}
	defer rows.Close()
	var out []store.SyncMessage
	for rows.Next() {
		m, err := scanSync(rows)
		if err != nil {
			return nil, fmt.Errorf("reading sync messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func scanSync(r scanner) (store.SyncMessage, error) {
	var (
		m                 store.SyncMessage
		state             string
		created           int64
		queued, delivered sql.NullInt64
	)
	if err := r.Scan(&m.ID, &m.LearningID, &m.From, &m.TaskID, &m.Urgency, &m.Relevance, &m.Score, &m.Message, &m.Reason,
		&m.DecidedBy, &state, &m.Note, &m.InjectionID, &created, &queued, &delivered); err != nil {
		return m, err
	}
	m.State = store.SyncState(state)
	m.CreatedAt = fromNanos(created)
	if queued.Valid {
		t := fromNanos(queued.Int64)
		m.QueuedAt = &t
	}
	if delivered.Valid {
		t := fromNanos(delivered.Int64)
		m.DeliveredAt = &t
	}
	return m, nil
}
