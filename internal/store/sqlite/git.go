package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The worktree registry and the merge queue.

// openMerge selects the open merge entries, as store.MergeState.Open judges
// them. It repeats the WHERE of the merges_open_task index word for word, so
// queries filtering on it may use that index.
const openMerge = `state IN ('queued', 'running', 'waiting')`

// checkOpen returns store.ErrClosed once the store is closed. Writes learn
// it from the writer; reads ask here, rather than failing on the closed pool
// with an error nobody can test for.
func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ErrClosed
	}
	return nil
}

// sameInstant returns t as it reads back from its column: the same instant,
// in UTC, without a monotonic clock reading.
func sameInstant(t time.Time) time.Time { return fromNanos(t.UnixNano()) }

// nullTime returns the column value of an optional time: UnixNano or NULL.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}

// optTime is nullTime read back.
func optTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

const worktreeColumns = `task_id, repo, branch, base, base_commit, path, state, port, archive, landed, landed_tip, note, created_at, updated_at`

func scanWorktree(r scanner) (store.Worktree, error) {
	var (
		wt               store.Worktree
		created, updated int64
	)
	if err := r.Scan(&wt.TaskID, &wt.Repo, &wt.Branch, &wt.Base, &wt.BaseCommit, &wt.Path, &wt.State, &wt.Port,
		&wt.Archive, &wt.Landed, &wt.LandedTip, &wt.Note, &created, &updated); err != nil {
		return store.Worktree{}, err
	}
	wt.CreatedAt, wt.UpdatedAt = fromNanos(created), fromNanos(updated)
	return wt, nil
}

// PutWorktree implements store.Store. A replaced record keeps its creation
// time unless wt sets one.
func (s *Store) PutWorktree(ctx context.Context, wt store.Worktree, evs ...event.Event) ([]event.Event, error) {
	now := time.Now().UTC()
	keepCreated := wt.CreatedAt.IsZero()
	if keepCreated {
		wt.CreatedAt = now
	}
	if wt.UpdatedAt.IsZero() {
		wt.UpdatedAt = now
	}
	return s.do(ctx, func(w *wtx) error {
		if err := w.taskExists(wt.TaskID); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO worktrees (`+worktreeColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (task_id) DO UPDATE SET repo = excluded.repo, branch = excluded.branch, base = excluded.base,
				base_commit = excluded.base_commit, path = excluded.path, state = excluded.state, port = excluded.port,
				archive = excluded.archive, landed = excluded.landed, landed_tip = excluded.landed_tip, note = excluded.note,
				created_at = CASE WHEN ? THEN worktrees.created_at ELSE excluded.created_at END,
				updated_at = excluded.updated_at`,
			string(wt.TaskID), wt.Repo, wt.Branch, wt.Base, wt.BaseCommit, wt.Path, string(wt.State), wt.Port,
			wt.Archive, wt.Landed, wt.LandedTip, wt.Note, wt.CreatedAt.UnixNano(), wt.UpdatedAt.UnixNano(),
			boolInt(keepCreated)); err != nil {
			return fmt.Errorf("recording the worktree of %s: %w", wt.TaskID, err)
		}
		return w.emit(evs...)
	}, false)
}

// GetWorktree implements store.Store.
func (s *Store) GetWorktree(ctx context.Context, id task.ID) (store.Worktree, error) {
	if err := s.checkOpen(); err != nil {
		return store.Worktree{}, err
	}
	wt, err := scanWorktree(s.reads.QueryRowContext(ctx, `SELECT `+worktreeColumns+` FROM worktrees WHERE task_id = ?`, string(id)))
	if isNoRows(err) {
		return store.Worktree{}, fmt.Errorf("worktree of %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Worktree{}, fmt.Errorf("reading the worktree of %s: %w", id, err)
	}
	return wt, nil
}

// ListWorktrees implements store.Store.
func (s *Store) ListWorktrees(ctx context.Context, repo string) ([]store.Worktree, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	query, args := `SELECT `+worktreeColumns+` FROM worktrees`, []any(nil)
	if repo != "" {
		query += ` WHERE repo = ?`
		args = append(args, repo)
	}
	query += ` ORDER BY created_at, task_id`
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing worktrees: %w", err)
	}
	defer rows.Close()
	var out []store.Worktree
	for rows.Next() {
		wt, err := scanWorktree(rows)
		if err != nil {
			return nil, fmt.Errorf("listing worktrees: %w", err)
		}
		out = append(out, wt)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing worktrees: %w", err)
	}
	return out, nil
}

const mergeColumns = `id, task_id, repo, branch, target, state, detail, files, attempts, commit_sha, pr_url,
	enqueued_at, updated_at, started_at, finished_at, step, step_tip`

func scanMerge(r scanner) (store.MergeEntry, error) {
	var (
		m                 store.MergeEntry
		files             sql.NullString
		enqueued, updated int64
		started, finished sql.NullInt64
	)
	if err := r.Scan(&m.ID, &m.TaskID, &m.Repo, &m.Branch, &m.Target, &m.State, &m.Detail, &files, &m.Attempts,
		&m.Commit, &m.PRURL, &enqueued, &updated, &started, &finished, &m.Step, &m.StepTip); err != nil {
		return store.MergeEntry{}, err
	}
	if files.Valid {
		if err := json.Unmarshal([]byte(files.String), &m.Files); err != nil {
			return store.MergeEntry{}, fmt.Errorf("merge entry %d: decoding files: %w", m.ID, err)
		}
	}
	m.EnqueuedAt, m.UpdatedAt = fromNanos(enqueued), fromNanos(updated)
	m.StartedAt, m.FinishedAt = optTime(started), optTime(finished)
	return m, nil
}

// mergeRow prepares m for its row: the files column, and m itself as it will
// read back (times in UTC, no empty file list), which is what the writing
// call returns.
func mergeRow(m store.MergeEntry) (store.MergeEntry, any, error) {
	var files any
	if len(m.Files) > 0 {
		b, err := json.Marshal(m.Files)
		if err != nil {
			return m, nil, fmt.Errorf("encoding files: %w", err)
		}
		files = string(b)
		m.Files = slices.Clone(m.Files)
	} else {
		m.Files = nil
	}
	m.EnqueuedAt, m.UpdatedAt = sameInstant(m.EnqueuedAt), sameInstant(m.UpdatedAt)
	if m.StartedAt != nil {
		t := sameInstant(*m.StartedAt)
		m.StartedAt = &t
	}
	if m.FinishedAt != nil {
		t := sameInstant(*m.FinishedAt)
		m.FinishedAt = &t
	}
	return m, files, nil
}

// openMergeOf returns the ID and state of task's open merge entry other than
// except, ok false when it has none.
func (w *wtx) openMergeOf(id task.ID, except int64) (int64, store.MergeState, bool, error) {
	var (
		entry int64
		state store.MergeState
	)
	err := w.queryRow(`SELECT id, state FROM merges WHERE task_id = ? AND `+openMerge+` AND id != ? ORDER BY id LIMIT 1`,
		string(id), except).Scan(&entry, &state)
	switch {
	case isNoRows(err):
		return 0, "", false, nil
	case err != nil:
		return 0, "", false, fmt.Errorf("looking for an open merge entry of %s: %w", id, err)
	}
	return entry, state, true, nil
}

// EnqueueMerge implements store.Store.
func (s *Store) EnqueueMerge(ctx context.Context, m store.MergeEntry, record func(store.MergeEntry) []event.Event) (store.MergeEntry, []event.Event, error) {
	now := time.Now().UTC()
	if m.EnqueuedAt.IsZero() {
		m.EnqueuedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = now
	}
	if m.State == "" {
		m.State = store.MergeQueued
	}
	m, files, err := mergeRow(m)
	if err != nil {
		return store.MergeEntry{}, nil, fmt.Errorf("queueing %s for a merge: %w", m.TaskID, err)
	}
	evs, err := s.do(ctx, func(w *wtx) error {
		if err := w.taskExists(m.TaskID); err != nil {
			return err
		}
		if m.State.Open() {
			entry, state, ok, err := w.openMergeOf(m.TaskID, 0)
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("queueing %s for a merge: it has merge entry %d, %s: %w", m.TaskID, entry, state, store.ErrExists)
			}
		}
		if m.ID != 0 {
			var taken bool
			if err := w.queryRow(`SELECT EXISTS (SELECT 1 FROM merges WHERE id = ?)`, m.ID).Scan(&taken); err != nil {
				return fmt.Errorf("queueing %s for a merge: %w", m.TaskID, err)
			}
			if taken {
				return fmt.Errorf("queueing %s for a merge: merge entry %d: %w", m.TaskID, m.ID, store.ErrExists)
			}
		}
		var id any // NULL: the next ID
		if m.ID != 0 {
			id = m.ID
		}
		res, err := w.exec(`INSERT INTO merges (`+mergeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, string(m.TaskID), m.Repo, m.Branch, m.Target, string(m.State), m.Detail, files, m.Attempts,
			m.Commit, m.PRURL, m.EnqueuedAt.UnixNano(), m.UpdatedAt.UnixNano(), nullTime(m.StartedAt), nullTime(m.FinishedAt),
			m.Step, m.StepTip)
		if err != nil {
			return fmt.Errorf("queueing %s for a merge: %w", m.TaskID, err)
		}
		if m.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("queueing %s for a merge: %w", m.TaskID, err)
		}
		if record == nil {
			return nil
		}
		return w.emit(record(m)...)
	}, false)
	if err != nil {
		return store.MergeEntry{}, nil, err
	}
	return m, evs, nil
}

// UpdateMerge implements store.Store. A mutation may not change the entry's
// ID or task, nor open it while its task has another open entry
// (store.ErrExists). UpdatedAt is set to now unless the mutation set it.
func (s *Store) UpdateMerge(ctx context.Context, id int64, mut store.MergeMutation) (store.MergeEntry, []event.Event, error) {
	if mut == nil {
		return store.MergeEntry{}, nil, fmt.Errorf("updating merge entry %d: no mutation", id)
	}
	var out store.MergeEntry
	evs, err := s.do(ctx, func(w *wtx) error {
		m, err := scanMerge(w.queryRow(`SELECT `+mergeColumns+` FROM merges WHERE id = ?`, id))
		if isNoRows(err) {
			return fmt.Errorf("merge entry %d: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reading merge entry %d: %w", id, err)
		}
		taskID, updated := m.TaskID, m.UpdatedAt
		evs, err := mut(&m)
		if err != nil {
			return err
		}
		if m.ID != id || m.TaskID != taskID {
			return fmt.Errorf("updating merge entry %d of %s: a mutation may not change the id or the task", id, taskID)
		}
		if m.UpdatedAt.Equal(updated) {
			m.UpdatedAt = time.Now().UTC()
		}
		m, files, err := mergeRow(m)
		if err != nil {
			return fmt.Errorf("updating merge entry %d of %s: %w", id, taskID, err)
		}
		if m.State.Open() {
			entry, state, ok, err := w.openMergeOf(taskID, id)
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("updating merge entry %d: %s has merge entry %d, %s: %w", id, taskID, entry, state, store.ErrExists)
			}
		}
		if _, err := w.exec(`UPDATE merges SET repo = ?, branch = ?, target = ?, state = ?, detail = ?, files = ?,
			attempts = ?, commit_sha = ?, pr_url = ?, enqueued_at = ?, updated_at = ?, started_at = ?, finished_at = ?,
			step = ?, step_tip = ?
			WHERE id = ?`,
			m.Repo, m.Branch, m.Target, string(m.State), m.Detail, files, m.Attempts, m.Commit, m.PRURL,
			m.EnqueuedAt.UnixNano(), m.UpdatedAt.UnixNano(), nullTime(m.StartedAt), nullTime(m.FinishedAt),
			m.Step, m.StepTip, id); err != nil {
			return fmt.Errorf("updating merge entry %d of %s: %w", id, taskID, err)
		}
		if err := w.emit(evs...); err != nil {
			return err
		}
		out = m
		return nil
	}, false)
	if err != nil {
		return store.MergeEntry{}, nil, err
	}
	return out, evs, nil
}

// GetMerge implements store.Store.
func (s *Store) GetMerge(ctx context.Context, id int64) (store.MergeEntry, error) {
	if err := s.checkOpen(); err != nil {
		return store.MergeEntry{}, err
	}
	m, err := scanMerge(s.reads.QueryRowContext(ctx, `SELECT `+mergeColumns+` FROM merges WHERE id = ?`, id))
	if isNoRows(err) {
		return store.MergeEntry{}, fmt.Errorf("merge entry %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.MergeEntry{}, fmt.Errorf("reading merge entry %d: %w", id, err)
	}
	return m, nil
}

// ListMerges implements store.Store. With a limit it reads the newest
// entries backwards and returns them oldest first.
func (s *Store) ListMerges(ctx context.Context, q store.MergeQuery) ([]store.MergeEntry, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	query, args := `SELECT `+mergeColumns+` FROM merges WHERE 1`, []any(nil)
	if q.TaskID != "" {
		query += ` AND task_id = ?`
		args = append(args, string(q.TaskID))
	}
	if q.Open {
		query += ` AND ` + openMerge
	}
	if q.Repo != "" {
		query += ` AND repo = ?`
		args = append(args, q.Repo)
	}
	if q.Target != "" {
		query += ` AND target = ?`
		args = append(args, q.Target)
	}
	if q.Limit > 0 {
		query += ` ORDER BY id DESC LIMIT ?`
		args = append(args, q.Limit)
	} else {
		query += ` ORDER BY id`
	}
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing merge entries: %w", err)
	}
	defer rows.Close()
	var out []store.MergeEntry
	for rows.Next() {
		m, err := scanMerge(rows)
		if err != nil {
			return nil, fmt.Errorf("listing merge entries: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing merge entries: %w", err)
	}
	if q.Limit > 0 {
		slices.Reverse(out)
	}
	return out, nil
}
