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

// Checkpoint implements store.Store. Everything that can be prepared without
// the database (message encoding, default times) is done on the caller's
// goroutine, so the writer only runs statements.
func (s *Store) Checkpoint(ctx context.Context, cp store.Checkpoint, evs ...event.Event) (task.Task, []event.Event, error) {
	if cp.From < 0 {
		return task.Task{}, nil, fmt.Errorf("checkpoint of %s: negative conversation length %d", cp.TaskID, cp.From)
	}
	now := time.Now().UTC()
	entries := make([]entryRow, len(cp.Entries))
	for i, e := range cp.Entries {
		msg, err := json.Marshal(e.Message)
		if err != nil {
			return task.Task{}, nil, fmt.Errorf("checkpoint of %s: encoding entry %d: %w", cp.TaskID, i, err)
		}
		at := e.At
		if at.IsZero() {
			at = now
		}
		entries[i] = entryRow{turn: e.Turn, at: at.UnixNano(), message: string(msg)}
	}
	delivered := slices.Clone(cp.Delivered) // the caller may reuse its slice once it stops waiting
	deliveredAt := cp.DeliveredAt
	if deliveredAt.IsZero() {
		deliveredAt = now
	}
	charges := make([]store.Charge, len(cp.Charges))
	for i, c := range cp.Charges {
		c.TaskID = cp.TaskID
		if c.At.IsZero() {
			c.At = now
		}
		charges[i] = c
	}

	enc, err := encodeEvents(evs)
	if err != nil {
		return task.Task{}, nil, fmt.Errorf("checkpoint of %s: %w", cp.TaskID, err)
	}

	var out task.Task
	committed, err := s.do(ctx, func(w *wtx) error {
		t, n, err := w.readTaskKept(cp.TaskID, cp.Mutate != nil)
		if err != nil {
			return err
		}
		if n != cp.From {
			return fmt.Errorf("checkpoint of %s: the conversation has %d entries, the caller expected %d: %w",
				cp.TaskID, n, cp.From, store.ErrConflict)
		}
		start := cp.From
		if cp.Replace {
			if _, err := w.exec(`DELETE FROM conversation_entries WHERE task_id = ?`, string(cp.TaskID)); err != nil {
				return fmt.Errorf("checkpoint of %s: clearing the conversation: %w", cp.TaskID, err)
			}
			start = 0
		}
		for i, e := range entries {
			if _, err := w.exec(`INSERT INTO conversation_entries (task_id, seq, turn, at, message) VALUES (?, ?, ?, ?, ?)`,
				string(cp.TaskID), start+i, e.turn, e.at, e.message); err != nil {
				return fmt.Errorf("checkpoint of %s: storing entry %d: %w", cp.TaskID, start+i, err)
			}
		}
		for _, id := range delivered {
			if err := w.deliver(cp.TaskID, id, deliveredAt); err != nil {
				return fmt.Errorf("checkpoint of %s: %w", cp.TaskID, err)
			}
		}
		for _, c := range charges {
			if err := w.charge(c); err != nil {
				return fmt.Errorf("checkpoint of %s: %w", cp.TaskID, err)
			}
		}
		if cp.Mutate != nil {
			data, err := w.applyMutationData(&t, cp.Mutate)
			if err != nil {
				return err
			}
			w.keepTask(t, data)
		}
		out = t
		return w.emitEncoded(enc)
	}, false)
	if err != nil {
		return task.Task{}, nil, err
	}
	return out, committed, nil
}

// entryRow is a conversation entry encoded for its row.
type entryRow struct {
	turn    int
	at      int64
	message string
}

// deliver marks injection id, which must be task's and undelivered,
// delivered at at. The conditional UPDATE is what makes delivery exactly
// once: of two checkpoints delivering the same injection, the second finds
// nothing to update and fails.
func (w *wtx) deliver(taskID task.ID, id int64, at time.Time) error {
	res, err := w.exec(`UPDATE injections SET delivered_at = ? WHERE id = ? AND task_id = ? AND delivered_at IS NULL`,
		at.UnixNano(), id, string(taskID))
	if err != nil {
		return fmt.Errorf("marking injection %d delivered: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	// Say why: unknown, another task's, or delivered already.
	var (
		owner     task.ID
		delivered sql.NullInt64
	)
	err = w.queryRow(`SELECT task_id, delivered_at FROM injections WHERE id = ?`, id).Scan(&owner, &delivered)
	switch {
	case isNoRows(err):
		return fmt.Errorf("injection %d: %w", id, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("reading injection %d: %w", id, err)
	case owner != taskID:
		return fmt.Errorf("injection %d is queued for %s, not %s: %w", id, owner, taskID, store.ErrNotFound)
	default:
		return fmt.Errorf("injection %d was delivered already at %s: %w", id,
			fromNanos(delivered.Int64).Format(time.RFC3339Nano), store.ErrConflict)
	}
}

// conversationLen returns the length of id's conversation, relying on seq
// being dense from 0: MAX(seq) is one probe of the primary key where COUNT(*)
// would scan the conversation.
func (w *wtx) conversationLen(id task.ID) (int, error) {
	var n int
	if err := w.queryRow(`SELECT COALESCE(MAX(seq) + 1, 0) FROM conversation_entries WHERE task_id = ?`,
		string(id)).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the conversation length of %s: %w", id, err)
	}
	return n, nil
}

// Conversation implements store.Store.
func (s *Store) Conversation(ctx context.Context, id task.ID, from int) ([]store.Entry, error) {
	rows, err := s.reads.QueryContext(ctx, `SELECT seq, turn, at, message FROM conversation_entries
		WHERE task_id = ? AND seq >= ? ORDER BY seq`, string(id), max(from, 0))
	if err != nil {
		return nil, fmt.Errorf("reading the conversation of %s: %w", id, err)
	}
	defer rows.Close()
	var out []store.Entry
	for rows.Next() {
		var (
			e   store.Entry
			at  int64
			msg []byte
		)
		if err := rows.Scan(&e.Seq, &e.Turn, &at, &msg); err != nil {
			return nil, fmt.Errorf("reading the conversation of %s: %w", id, err)
		}
		if err := json.Unmarshal(msg, &e.Message); err != nil {
			return nil, fmt.Errorf("reading the conversation of %s: decoding entry %d: %w", id, e.Seq, err)
		}
		e.At = fromNanos(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the conversation of %s: %w", id, err)
	}
	if len(out) == 0 {
		// Tell an unknown task from an empty (or fully read) conversation.
		if err := s.taskExists(ctx, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ConversationLen implements store.Store.
func (s *Store) ConversationLen(ctx context.Context, id task.ID) (int, error) {
	var (
		exists bool
		n      int
	)
	if err := s.reads.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?),
		(SELECT COALESCE(MAX(seq) + 1, 0) FROM conversation_entries WHERE task_id = ?)`,
		string(id), string(id)).Scan(&exists, &n); err != nil {
		return 0, fmt.Errorf("reading the conversation length of %s: %w", id, err)
	}
	if !exists {
		return 0, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return n, nil
}

// taskExists returns store.ErrNotFound (wrapped) unless task id exists, read
// from the read pool.
func (s *Store) taskExists(ctx context.Context, id task.ID) error {
	var exists bool
	if err := s.reads.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?)`, string(id)).Scan(&exists); err != nil {
		return fmt.Errorf("checking task %s: %w", id, err)
	}
	if !exists {
		return fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return nil
}
