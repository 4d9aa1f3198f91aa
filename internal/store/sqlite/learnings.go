package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// dedupCandidates is how many full-text matches are compared with a new
// learning.
const dedupCandidates = 20

// RecordLearning implements store.Store: an exact match of the normalized
// summary (its fingerprint), else the most similar of the best full-text
// matches at or above l.Similarity, takes the task as a further source;
// otherwise the learning is added.
func (s *Store) RecordLearning(ctx context.Context, l store.Learning, record func(store.Learning) []event.Event) (store.Learning, []event.Event, error) {
	l.Summary = strings.TrimSpace(l.Summary)
	if l.Summary == "" {
		return store.Learning{}, nil, fmt.Errorf("recording a learning of %s: the summary is empty", l.TaskID)
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = time.Now().UTC()
	}
	if l.Kind == "" {
		l.Kind = string(knowledge.Explicit)
	}
	if l.Similarity <= 0 {
		l.Similarity = store.DefaultSimilarity
	}
	var out store.Learning
	evs, err := s.do(ctx, func(w *wtx) error {
		if err := w.taskExists(l.TaskID); err != nil {
			return err
		}
		id, err := w.similarLearning(l)
		if err != nil {
			return fmt.Errorf("recording a learning of %s: %w", l.TaskID, err)
		}
		if id > 0 {
			out, err = w.mergeLearning(id, l)
		} else {
			out, err = w.insertLearning(l)
		}
		if err != nil {
			return fmt.Errorf("recording a learning of %s: %w", l.TaskID, err)
		}
		out.Turn, out.Similarity = l.Turn, 0
		if record == nil {
			return nil
		}
		return w.emit(record(out)...)
	}, false)
	if err != nil {
		return store.Learning{}, nil, err
	}
	return out, evs, nil
}

// similarLearning returns the stored learning l duplicates, 0 when none.
func (w *wtx) similarLearning(l store.Learning) (int64, error) {
	var id int64
	err := w.queryRow(`SELECT id FROM learnings WHERE fingerprint = ? ORDER BY id LIMIT 1`, knowledge.Fingerprint(l.Summary)).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	q := knowledge.FTSQuery(l.Summary)
	if q == "" {
		return 0, nil
	}
	q = "summary : (" + q + ")" // the summaries are compared
	rows, err := w.query(`SELECT l.id, l.summary FROM learnings_fts f JOIN learnings l ON l.id = f.rowid
		WHERE learnings_fts MATCH ? ORDER BY f.rank LIMIT ?`, q, dedupCandidates)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	best, bestSim := int64(0), 0.0
	for rows.Next() {
		var (
			cid     int64
			summary string
		)
		if err := rows.Scan(&cid, &summary); err != nil {
			return 0, err
		}
		if sim := knowledge.Similarity(l.Summary, summary); sim >= l.Similarity && sim > bestSim {
			best, bestSim = cid, sim
		}
	}
	return best, rows.Err()
}

func (w *wtx) insertLearning(l store.Learning) (store.Learning, error) {
	tags, err := jsonList(l.Tags)
	if err != nil {
		return l, err
	}
	files, err := jsonList(l.Files)
	if err != nil {
		return l, err
	}
	at := l.CreatedAt.UnixNano()
	res, err := w.exec(`INSERT INTO learnings (task_id, summary, detail, tags, created_at, kind, files, fingerprint, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(l.TaskID), l.Summary, l.Detail, tags, at, l.Kind, files, knowledge.Fingerprint(l.Summary), at)
	if err != nil {
		return l, err
	}
	if l.ID, err = res.LastInsertId(); err != nil {
		return l, err
	}
	if _, err := w.exec(`INSERT INTO learning_sources (learning_id, task_id, kind, at) VALUES (?, ?, ?, ?)`,
		l.ID, string(l.TaskID), l.Kind, at); err != nil {
		return l, err
	}
	l.UpdatedAt = l.CreatedAt
	l.Sources = []store.LearningSource{{TaskID: l.TaskID, Kind: l.Kind, At: l.CreatedAt}}
	return l, nil
}

// mergeLearning adds l's task as a source of learning id (once per task),
// with l's tags and files, and l's detail when the learning had none.
func (w *wtx) mergeLearning(id int64, l store.Learning) (store.Learning, error) {
	cur, err := w.readLearning(id)
	if err != nil {
		return l, err
	}
	cur.Tags = union(cur.Tags, l.Tags)
	cur.Files = union(cur.Files, l.Files)
	if cur.Detail == "" {
		cur.Detail = l.Detail
	}
	tags, err := jsonList(cur.Tags)
	if err != nil {
		return l, err
	}
	files, err := jsonList(cur.Files)
	if err != nil {
		return l, err
	}
	at := l.CreatedAt.UnixNano()
	res, err := w.exec(`INSERT INTO learning_sources (learning_id, task_id, kind, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (learning_id, task_id) DO NOTHING`, id, string(l.TaskID), l.Kind, at)
	if err != nil {
		return l, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return l, err
	}
	cur.Repeat = n == 0
	if n > 0 && l.CreatedAt.After(cur.UpdatedAt) {
		cur.UpdatedAt = l.CreatedAt // a source was added, later than the last
	}
	if _, err := w.exec(`UPDATE learnings SET detail = ?, tags = ?, files = ?, updated_at = ? WHERE id = ?`,
		cur.Detail, tags, files, cur.UpdatedAt.UnixNano(), id); err != nil {
		return l, err
	}
	if cur.Sources, err = w.sources(id); err != nil {
		return l, err
	}
	cur.Merged = true
	return cur, nil
}

func (w *wtx) readLearning(id int64) (store.Learning, error) {
	l, err := scanLearning(w.queryRow(`SELECT `+learningCols+` FROM learnings WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("learning %d: %w", id, store.ErrNotFound)
	}
	return l, err
}

func (w *wtx) sources(id int64) ([]store.LearningSource, error) {
	rows, err := w.query(`SELECT task_id, kind, at FROM learning_sources WHERE learning_id = ? ORDER BY rowid`, id)
	if err != nil {
		return nil, err
	}
	return scanSources(rows)
}

// Learnings implements store.Store.
func (s *Store) Learnings(ctx context.Context, q store.LearningQuery) ([]store.Learning, error) {
	var (
		query string
		args  []any
	)
	q.Search = strings.TrimSpace(q.Search)
	if q.Search != "" {
		m := knowledge.FTSQuery(q.Search)
		if m == "" {
			return nil, nil
		}
		query = `SELECT ` + prefixed("l.", learningCols) + ` FROM learnings_fts f JOIN learnings l ON l.id = f.rowid
			WHERE learnings_fts MATCH ? AND l.id > ?`
		args = []any{m, q.AfterID}
	} else {
		query, args = `SELECT `+prefixed("l.", learningCols)+` FROM learnings l WHERE l.id > ?`, []any{q.AfterID}
	}
	if q.TaskID != "" {
		query += ` AND l.id IN (SELECT learning_id FROM learning_sources WHERE task_id = ?)`
		args = append(args, string(q.TaskID))
	}
	if q.Search != "" {
		query += ` ORDER BY f.rank, l.id`
	} else {
		query += ` ORDER BY l.id`
	}
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading learnings: %w", err)
	}
	var out []store.Learning
	for rows.Next() {
		l, err := scanLearning(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading learnings: %w", err)
		}
		out = append(out, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading learnings: %w", err)
	}
	if err := s.readAllSources(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readAllSources fills in the sources of ls with one query per hundred
// learnings, not one per learning.
func (s *Store) readAllSources(ctx context.Context, ls []store.Learning) error {
	const chunk = 100
	at := make(map[int64]int, len(ls))
	for i, l := range ls {
		at[l.ID] = i
	}
	for lo := 0; lo < len(ls); lo += chunk {
		part := ls[lo:min(lo+chunk, len(ls))]
		args := make([]any, len(part))
		for i, l := range part {
			args[i] = l.ID
		}
		rows, err := s.reads.QueryContext(ctx, `SELECT learning_id, task_id, kind, at FROM learning_sources WHERE learning_id IN (?`+
			strings.Repeat(", ?", len(part)-1)+`) ORDER BY rowid`, args...)
		if err != nil {
			return fmt.Errorf("reading the sources of learnings: %w", err)
		}
		for rows.Next() {
			var (
				id  int64
				src store.LearningSource
				t   int64
			)
			if err := rows.Scan(&id, &src.TaskID, &src.Kind, &t); err != nil {
				rows.Close()
				return fmt.Errorf("reading the sources of learnings: %w", err)
			}
			src.At = fromNanos(t)
			l := &ls[at[id]]
			l.Sources = append(l.Sources, src)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("reading the sources of learnings: %w", err)
		}
	}
	return nil
}

// GetLearning implements store.Store.
func (s *Store) GetLearning(ctx context.Context, id int64) (store.Learning, error) {
	l, err := scanLearning(s.reads.QueryRowContext(ctx, `SELECT `+learningCols+` FROM learnings WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("learning %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("reading learning %d: %w", id, err)
	}
	l.Sources, err = s.readSources(ctx, id)
	return l, err
}

// ForgetLearning implements store.Store.
func (s *Store) ForgetLearning(ctx context.Context, id int64, record func(store.Learning) []event.Event) (store.Learning, []event.Event, error) {
	var out store.Learning
	evs, err := s.do(ctx, func(w *wtx) error {
		l, err := w.readLearning(id)
		if err != nil {
			return err
		}
		if l.Sources, err = w.sources(id); err != nil {
			return err
		}
		if _, err := w.exec(`DELETE FROM learning_sources WHERE learning_id = ?`, id); err != nil {
			return fmt.Errorf("forgetting learning %d: %w", id, err)
		}
		if _, err := w.exec(`DELETE FROM learnings WHERE id = ?`, id); err != nil {
			return fmt.Errorf("forgetting learning %d: %w", id, err)
		}
		out = l
		if record == nil {
			return nil
		}
		return w.emit(record(l)...)
	}, false)
	if err != nil {
		return store.Learning{}, nil, err
	}
	return out, evs, nil
}

func (s *Store) readSources(ctx context.Context, id int64) ([]store.LearningSource, error) {
	rows, err := s.reads.QueryContext(ctx, `SELECT task_id, kind, at FROM learning_sources WHERE learning_id = ? ORDER BY rowid`, id)
	if err != nil {
		return nil, fmt.Errorf("reading the sources of learning %d: %w", id, err)
	}
	return scanSources(rows)
}

func scanSources(rows *sql.Rows) ([]store.LearningSource, error) {
	defer rows.Close()
	var out []store.LearningSource
	for rows.Next() {
		var (
			src store.LearningSource
			at  int64
		)
		if err := rows.Scan(&src.TaskID, &src.Kind, &at); err != nil {
			return nil, err
		}
		src.At = fromNanos(at)
		out = append(out, src)
	}
	return out, rows.Err()
}

const learningCols = `id, task_id, kind, summary, detail, tags, files, created_at, updated_at`

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

func scanLearning(r scanner) (store.Learning, error) {
	var (
		l                  store.Learning
		tags, files        sql.NullString
		created, updatedAt int64
	)
	if err := r.Scan(&l.ID, &l.TaskID, &l.Kind, &l.Summary, &l.Detail, &tags, &files, &created, &updatedAt); err != nil {
		return l, err
	}
	if err := fromJSONList(tags, &l.Tags); err != nil {
		return l, fmt.Errorf("learning %d: decoding tags: %w", l.ID, err)
	}
	if err := fromJSONList(files, &l.Files); err != nil {
		return l, fmt.Errorf("learning %d: decoding files: %w", l.ID, err)
	}
	l.CreatedAt, l.UpdatedAt = fromNanos(created), fromNanos(updatedAt)
	return l, nil
}

// jsonList encodes a list as a JSON array, NULL when empty.
func jsonList(xs []string) (any, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(xs)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func fromJSONList(s sql.NullString, into *[]string) error {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.Unmarshal([]byte(s.String), into)
}

// union returns a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
