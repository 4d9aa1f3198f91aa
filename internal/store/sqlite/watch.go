package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// CreateWatchSession implements store.Store.
func (s *Store) CreateWatchSession(ctx context.Context, ws store.WatchSession, evs ...event.Event) ([]event.Event, error) {
	if ws.ID == "" || ws.Name == "" {
		return nil, errors.New("creating a watcher session: no id or name")
	}
	data, err := json.Marshal(ws)
	if err != nil {
		return nil, fmt.Errorf("encoding watcher session %s: %w", ws.ID, err)
	}
	return s.do(ctx, func(w *wtx) error {
		var id string
		err := w.queryRow(`SELECT id FROM watch_sessions WHERE id = ? OR name = ?`, ws.ID, ws.Name).Scan(&id)
		if err == nil {
			return fmt.Errorf("watcher session %s (%s): %w", ws.Name, id, store.ErrExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := w.exec(`INSERT INTO watch_sessions (id, name, status, created_at, data) VALUES (?, ?, ?, ?, ?)`,
			ws.ID, ws.Name, string(ws.Status), ws.CreatedAt.UnixNano(), data); err != nil {
			return fmt.Errorf("creating watcher session %s: %w", ws.ID, err)
		}
		return w.emit(evs...)
	}, false)
}

// readWatch reads one session inside the writer.
func (w *wtx) readWatch(id string) (store.WatchSession, error) {
	var data []byte
	err := w.queryRow(`SELECT data FROM watch_sessions WHERE id = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.WatchSession{}, fmt.Errorf("watcher session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.WatchSession{}, err
	}
	var ws store.WatchSession
	if err := json.Unmarshal(data, &ws); err != nil {
		return ws, fmt.Errorf("decoding watcher session %s: %w", id, err)
	}
	return ws, nil
}

// writeWatch stores a session inside the writer.
func (w *wtx) writeWatch(ws store.WatchSession) error {
	data, err := json.Marshal(ws)
	if err != nil {
		return fmt.Errorf("encoding watcher session %s: %w", ws.ID, err)
	}
	if _, err := w.exec(`UPDATE watch_sessions SET name = ?, status = ?, data = ? WHERE id = ?`, ws.Name, string(ws.Status), data, ws.ID); err != nil {
		return fmt.Errorf("updating watcher session %s: %w", ws.ID, err)
	}
	return nil
}

// UpdateWatchSession implements store.Store.
func (s *Store) UpdateWatchSession(ctx context.Context, id string, mut func(*store.WatchSession) ([]event.Event, error)) (store.WatchSession, []event.Event, error) {
	if mut == nil {
		return store.WatchSession{}, nil, fmt.Errorf("updating watcher session %s: no mutation", id)
	}
	var out store.WatchSession
	evs, err := s.do(ctx, func(w *wtx) error {
		ws, err := w.readWatch(id)
		if err != nil {
			return err
		}
		was := ws
		evs, err := mut(&ws)
		if err != nil {
			return err
		}
		if ws.ID != was.ID || !ws.CreatedAt.Equal(was.CreatedAt) {
			return fmt.Errorf("updating watcher session %s: its id and creation time do not change", id)
		}
		if err := w.writeWatch(ws); err != nil {
			return err
		}
		out = ws
		return w.emit(evs...)
	}, false)
	if err != nil {
		return store.WatchSession{}, nil, err
	}
	return out, evs, nil
}

// GetWatchSession implements store.Store.
func (s *Store) GetWatchSession(ctx context.Context, id string) (store.WatchSession, error) {
	var data []byte
	err := s.reads.QueryRowContext(ctx, `SELECT data FROM watch_sessions WHERE id = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.WatchSession{}, fmt.Errorf("watcher session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.WatchSession{}, fmt.Errorf("reading watcher session %s: %w", id, err)
	}
	var ws store.WatchSession
	if err := json.Unmarshal(data, &ws); err != nil {
		return ws, fmt.Errorf("decoding watcher session %s: %w", id, err)
	}
	return ws, nil
}

// ResolveWatchSession implements store.Store.
func (s *Store) ResolveWatchSession(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", &task.InvalidError{Field: "watcher", Msg: "is empty: name a watcher session by its name or id"}
	}
	var id string
	err := s.reads.QueryRowContext(ctx, `SELECT id FROM watch_sessions WHERE name = ? OR id = ?`, ref, ref).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("looking up watcher session %q: %w", ref, err)
	}
	prefix := strings.ToLower(ref)
	if !strings.HasPrefix(prefix, "w-") {
		prefix = "w-" + prefix
	}
	rows, err := s.reads.QueryContext(ctx, `SELECT id FROM watch_sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6`, prefix, prefix+"\x7f")
	if err != nil {
		return "", fmt.Errorf("looking up watcher session %q: %w", ref, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("looking up watcher session %q: %w", ref, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("looking up watcher session %q: %w", ref, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("watcher session %s: %w", ref, store.ErrNotFound)
	case 1:
		return ids[0], nil
	}
	return "", &task.InvalidError{Field: "watcher", Msg: fmt.Sprintf("%q matches several watcher sessions (%s); type more of the id", ref, strings.Join(ids, ", "))}
}

// ListWatchSessions implements store.Store.
func (s *Store) ListWatchSessions(ctx context.Context) ([]store.WatchSession, error) {
	rows, err := s.reads.QueryContext(ctx, `SELECT data FROM watch_sessions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("listing watcher sessions: %w", err)
	}
	defer rows.Close()
	var out []store.WatchSession
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("listing watcher sessions: %w", err)
		}
		var ws store.WatchSession
		if err := json.Unmarshal(data, &ws); err != nil {
			return nil, fmt.Errorf("decoding a watcher session: %w", err)
		}
		out = append(out, ws)
	}
	return out, rows.Err()
}

// RecordEvaluation implements store.Store.
func (s *Store) RecordEvaluation(ctx context.Context, e store.WatchEvaluation, record func(store.WatchEvaluation) []event.Event) (store.WatchEvaluation, []event.Event, error) {
	if e.At.IsZero() {
		return e, nil, errors.New("recording an evaluation: no time")
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		ws, err := w.readWatch(e.SessionID)
		if err != nil {
			return err
		}
		e.ID = 0
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		res, err := w.exec(`INSERT INTO watch_evaluations (session_id, task_id, at, data) VALUES (?, ?, ?, ?)`,
			e.SessionID, string(e.TaskID), e.At.UnixNano(), data)
		if err != nil {
			return fmt.Errorf("recording an evaluation of %s: %w", e.SessionID, err)
		}
		if e.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if e.Provider != "" || e.CostUSD > 0 || e.InputTokens > 0 {
			if _, err := w.exec(`INSERT INTO costs (task_id, at, provider, model, input_tokens, output_tokens,
				cache_read_tokens, cache_write_tokens, cost_usd, duration_ms, watcher) VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)`,
				string(e.TaskID), e.At.UnixNano(), e.Provider, e.Model, e.InputTokens, e.OutputTokens, e.CostUSD, e.DurationMs, e.SessionID); err != nil {
				return fmt.Errorf("charging an evaluation to %s: %w", e.SessionID, err)
			}
		}
		ws.SpentUSD += e.CostUSD
		ws.Evaluations++
		if e.InjectionID != 0 {
			ws.Interjections++
		}
		ws.UpdatedAt = e.At
		if err := w.writeWatch(ws); err != nil {
			return err
		}
		if record == nil {
			return nil
		}
		return w.emit(record(e)...)
	}, false)
	if err != nil {
		return store.WatchEvaluation{}, nil, err
	}
	return e, evs, nil
}

// WatchEvaluations implements store.Store.
func (s *Store) WatchEvaluations(ctx context.Context, q store.WatchQuery) ([]store.WatchEvaluation, error) {
	var (
		where = []string{"id > ?"}
		args  = []any{q.AfterID}
	)
	if q.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, q.SessionID)
	}
	query := `SELECT id, data FROM watch_evaluations WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading evaluations: %w", err)
	}
	defer rows.Close()
	var out []store.WatchEvaluation
	for rows.Next() {
		var (
			id   int64
			data []byte
		)
		if err := rows.Scan(&id, &data); err != nil {
			return nil, fmt.Errorf("reading evaluations: %w", err)
		}
		var e store.WatchEvaluation
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("decoding evaluation %d: %w", id, err)
		}
		e.ID = id
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading evaluations: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
