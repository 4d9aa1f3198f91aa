package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// RecordLearning implements store.Store.
func (s *Store) RecordLearning(ctx context.Context, l store.Learning, record func(store.Learning) []event.Event) (store.Learning, []event.Event, error) {
	if strings.TrimSpace(l.Summary) == "" {
		return store.Learning{}, nil, fmt.Errorf("recording a learning of %s: the summary is empty", l.TaskID)
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = time.Now().UTC()
	}
	var tags any
	if len(l.Tags) > 0 {
		b, err := json.Marshal(l.Tags)
		if err != nil {
			return store.Learning{}, nil, fmt.Errorf("recording a learning of %s: encoding tags: %w", l.TaskID, err)
		}
		tags = string(b)
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		if err := w.taskExists(l.TaskID); err != nil {
			return err
		}
		res, err := w.exec(`INSERT INTO learnings (task_id, summary, detail, tags, created_at) VALUES (?, ?, ?, ?, ?)`,
			string(l.TaskID), l.Summary, l.Detail, tags, l.CreatedAt.UnixNano())
		if err != nil {
			return fmt.Errorf("recording a learning of %s: %w", l.TaskID, err)
		}
		if l.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("recording a learning of %s: %w", l.TaskID, err)
		}
		if record == nil {
			return nil
		}
		return w.emit(record(l)...)
	}, false)
	if err != nil {
		return store.Learning{}, nil, err
	}
	return l, evs, nil
}

// Learnings implements store.Store.
func (s *Store) Learnings(ctx context.Context, q store.LearningQuery) ([]store.Learning, error) {
	query, args := `SELECT id, task_id, summary, detail, tags, created_at FROM learnings WHERE id > ?`, []any{q.AfterID}
	if q.TaskID != "" {
		query += ` AND task_id = ?`
		args = append(args, string(q.TaskID))
	}
	query += ` ORDER BY id`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading learnings: %w", err)
	}
	defer rows.Close()
	var out []store.Learning
	for rows.Next() {
		var (
			l       store.Learning
			tags    sql.NullString
			created int64
		)
		if err := rows.Scan(&l.ID, &l.TaskID, &l.Summary, &l.Detail, &tags, &created); err != nil {
			return nil, fmt.Errorf("reading learnings: %w", err)
		}
		if tags.Valid {
			if err := json.Unmarshal([]byte(tags.String), &l.Tags); err != nil {
				return nil, fmt.Errorf("reading learning %d: decoding tags: %w", l.ID, err)
			}
		}
		l.CreatedAt = fromNanos(created)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading learnings: %w", err)
	}
	return out, nil
}
