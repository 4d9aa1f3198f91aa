package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

func scanTask(r scanner) (task.Task, error) {
	var data []byte
	if err := r.Scan(&data); err != nil {
		return task.Task{}, err
	}
	return decodeTask(data)
}

func decodeTask(data []byte) (task.Task, error) {
	var t task.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return task.Task{}, fmt.Errorf("decoding a stored task: %w", err)
	}
	return t, nil
}

// taskColumns are the columns of tasks every write sets, in taskArgs'
// order. All but data repeat fields of data: what queries filter and sort
// on, and what listings show (task.Summary). Every write of a task goes
// through taskArgs, so they never disagree with data.
const taskColumns = `id, status, priority, parent_id, created_at, updated_at, data,
	headline, persona, engine, model, resume_pending, close_reason,
	iterations, input_tokens, output_tokens, cost_usd, started_at, finished_at, listing`

// taskArgs returns the column values of t in taskColumns' order.
func taskArgs(t task.Task) ([]any, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	listing, err := json.Marshal(t.Summarize())
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	return []any{string(t.ID), string(t.Status), t.Priority, nullString(string(t.ParentID)),
		t.CreatedAt.UnixNano(), t.UpdatedAt.UnixNano(), string(data),
		task.Headline(t.Description), t.Persona, t.Engine, t.Model, boolInt(t.ResumePending), t.CloseReason,
		t.Usage.Iterations, t.Usage.InputTokens, t.Usage.OutputTokens, t.Usage.CostUSD,
		nanosOrNil(t.StartedAt), nanosOrNil(t.FinishedAt), string(listing)}, nil
}

var (
	insertTaskSQL = `INSERT OR IGNORE INTO tasks (` + taskColumns + `) VALUES (` + placeholders(strings.Count(taskColumns, ",")+1) + `)`
	// updateTaskSQL writes every column but the id, which never changes:
	// setting the primary key, even to the value it has, makes SQLite
	// look for rows of every table that references tasks under the old and
	// the new key, which in injections (whose task_id index is partial) is
	// two scans of the whole table per write.
	updateTaskSQL, updateTaskCols = updateSQL(func(col string) bool { return col != "id" })
	// updateTaskBodySQL leaves out the indexed columns too (status,
	// created_at, parent_id): a write that keeps them, as every turn's
	// checkpoint does, rewrites no index entry.
	updateTaskBodySQL, updateTaskBodyCols = updateSQL(func(col string) bool {
		return col != "id" && col != "status" && col != "created_at" && col != "parent_id"
	})
)

// updateSQL returns the UPDATE of task columns that keep selects, by id,
// and the positions of those columns in taskColumns (and taskArgs).
func updateSQL(keep func(col string) bool) (string, []int) {
	var (
		cols []string
		at   []int
	)
	for i, c := range strings.Split(taskColumns, ",") {
		if c = strings.TrimSpace(c); keep(c) {
			cols, at = append(cols, c), append(at, i)
		}
	}
	return `UPDATE tasks SET (` + strings.Join(cols, ", ") + `) = (` + placeholders(len(cols)) + `) WHERE id = ?`, at
}

// updateArgs returns the arguments of an UPDATE from updateSQL: the values
// of args (taskArgs') at cols, then the id.
func updateArgs(args []any, cols []int) []any {
	out := make([]any, 0, len(cols)+1)
	for _, i := range cols {
		out = append(out, args[i])
	}
	return append(out, args[0])
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// backfillTaskColumns is migration 7's: it sets the listing columns of
// every stored task from its JSON.
func backfillTaskColumns(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT data FROM tasks`)
	if err != nil {
		return fmt.Errorf("reading tasks: %w", err)
	}
	var ts []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return err
		}
		ts = append(ts, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading tasks: %w", err)
	}
	st, err := tx.PrepareContext(ctx, updateTaskSQL)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, t := range ts {
		args, err := taskArgs(t)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, updateArgs(args, updateTaskCols)...); err != nil {
			return fmt.Errorf("filling the columns of task %s: %w", t.ID, err)
		}
	}
	return nil
}

// CreateTask implements store.Store.
func (s *Store) CreateTask(ctx context.Context, t task.Task, evs ...event.Event) ([]event.Event, error) {
	args, err := taskArgs(t)
	if err != nil {
		return nil, err
	}
	return s.do(ctx, func(w *wtx) error {
		if t.ParentID != "" {
			var n int
			if err := w.queryRow(`SELECT COUNT(*) FROM tasks WHERE id = ?`, string(t.ParentID)).Scan(&n); err != nil {
				return fmt.Errorf("checking parent task %s: %w", t.ParentID, err)
			}
			if n == 0 {
				return fmt.Errorf("parent task %s: %w", t.ParentID, store.ErrNotFound)
			}
		}
		res, err := w.exec(insertTaskSQL, args...)
		if err != nil {
			return fmt.Errorf("inserting task %s: %w", t.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("creating task %s: %w", t.ID, store.ErrExists)
		}
		return w.emit(evs...)
	}, false)
}

// UpdateTask implements store.Store.
func (s *Store) UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error) {
	var out task.Task
	evs, err := s.do(ctx, func(w *wtx) error {
		t, err := w.readTask(id)
		if err != nil {
			return err
		}
		if err := w.applyMutation(&t, m); err != nil {
			return err
		}
		out = t
		return nil
	}, false)
	if err != nil {
		return task.Task{}, nil, err
	}
	return out, evs, nil
}

// readTask reads task id inside the write transaction; a missing task is
// store.ErrNotFound.
func (w *wtx) readTask(id task.ID) (task.Task, error) {
	t, err := scanTask(w.queryRow(`SELECT data FROM tasks WHERE id = ?`, string(id)))
	if isNoRows(err) {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	return t, nil
}

// taskExists returns store.ErrNotFound (wrapped) unless task id exists.
func (w *wtx) taskExists(id task.ID) error {
	var n int
	if err := w.queryRow(`SELECT COUNT(*) FROM tasks WHERE id = ?`, string(id)).Scan(&n); err != nil {
		return fmt.Errorf("checking task %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// applyMutation applies m to t, as read by readTask, stores the result and
// emits m's events. On error *t may be half changed and the operation must
// fail.
func (w *wtx) applyMutation(t *task.Task, m store.Mutation) error {
	_, err := w.applyMutationData(t, m)
	return err
}

// applyMutationData is applyMutation that also returns the JSON stored.
func (w *wtx) applyMutationData(t *task.Task, m store.Mutation) (string, error) {
	id, from, closing := t.ID, t.Status, t.Closing
	parent, created := t.ParentID, t.CreatedAt.UnixNano()
	evs, err := m(t)
	if err != nil {
		return "", err
	}
	if t.ID != id {
		return "", fmt.Errorf("updating task %s: a mutation may not change the id", id)
	}
	if t.Closing && !closing {
		ids, err := w.holding(id)
		if err != nil {
			return "", err
		}
		if len(ids) > 0 {
			return "", &store.PendingError{ID: id, Pending: ids}
		}
	}
	if t.Status.Terminal() && !from.Terminal() {
		ev, err := w.returnQueued(*t)
		if err != nil {
			return "", err
		}
		if ev != nil {
			evs = append(evs, *ev)
		}
	}
	args, err := taskArgs(*t)
	if err != nil {
		return "", err
	}
	q, cols := updateTaskSQL, updateTaskCols
	if t.Status == from && t.ParentID == parent && t.CreatedAt.UnixNano() == created {
		q, cols = updateTaskBodySQL, updateTaskBodyCols
	}
	if _, err := w.exec(q, updateArgs(args, cols)...); err != nil {
		return "", fmt.Errorf("updating task %s: %w", id, err)
	}
	return args[6].(string), w.emit(evs...)
}

// GetTask implements store.Store.
func (s *Store) GetTask(ctx context.Context, id task.ID) (task.Task, error) {
	t, err := scanTask(s.reads.QueryRowContext(ctx, `SELECT data FROM tasks WHERE id = ?`, string(id)))
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
	rows, err := s.reads.QueryContext(ctx, `SELECT id FROM tasks WHERE id >= ? AND id < ? ORDER BY id LIMIT 6`, norm, norm+"\x7f")
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

// listWhere builds the WHERE clause (with its leading space, or empty) and
// ORDER BY for opts. after is the created_at of opts.After.
func listWhere(opts store.ListOptions, after int64) (string, []any) {
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
		// "+status": filter while reading in creation order (the order
		// asked for, so a page stops early) rather than gather by status
		// from tasks_status and sort.
		where = append(where, "+status IN ("+strings.Join(ph, ",")+")")
	}
	if opts.ParentID != "" {
		where = append(where, "parent_id = ?")
		args = append(args, string(opts.ParentID))
	}
	if opts.After != "" {
		where = append(where, "(created_at, id) > (?, ?)")
		args = append(args, after, string(opts.After))
	}
	q := ""
	if len(where) > 0 {
		q = " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, id"
	if opts.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, opts.Limit)
	}
	return q, args
}

// listQuery returns the query selecting cols of the tasks opts selects.
// opts.After must name a stored task (else store.ErrNotFound).
func (s *Store) listQuery(ctx context.Context, cols string, opts store.ListOptions) (string, []any, error) {
	var after int64
	if opts.After != "" {
		err := s.reads.QueryRowContext(ctx, `SELECT created_at FROM tasks WHERE id = ?`, string(opts.After)).Scan(&after)
		if isNoRows(err) {
			return "", nil, fmt.Errorf("listing after task %s: %w", opts.After, store.ErrNotFound)
		}
		if err != nil {
			return "", nil, fmt.Errorf("listing tasks: %w", err)
		}
	}
	where, args := listWhere(opts, after)
	return "SELECT " + cols + " FROM tasks" + where, args, nil
}

// ListTasks implements store.Store.
func (s *Store) ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error) {
	q, args, err := s.listQuery(ctx, "data", opts)
	if err != nil {
		return nil, err
	}
	rows, err := s.reads.QueryContext(ctx, q, args...)
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

// summaryColumns are what ListSummaries reads, in scanSummary's order.
const summaryColumns = `id, headline, priority, coalesce(parent_id, ''), persona, engine, model,
	status, resume_pending, close_reason, iterations, input_tokens, output_tokens, cost_usd,
	created_at, updated_at, started_at, finished_at`

// ListSummaries implements store.Store: it reads the listing columns, never
// the task's JSON.
func (s *Store) ListSummaries(ctx context.Context, opts store.ListOptions) ([]task.Summary, error) {
	q, args, err := s.listQuery(ctx, summaryColumns, opts)
	if err != nil {
		return nil, err
	}
	rows, err := s.reads.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	out := make([]task.Summary, 0, max(opts.Limit, 16))
	var (
		sm                task.Summary
		resume            int
		created, updated  int64
		started, finished sql.NullInt64
	)
	for rows.Next() {
		if err := rows.Scan(&sm.ID, &sm.Description, &sm.Priority, &sm.ParentID, &sm.Persona, &sm.Engine, &sm.Model,
			&sm.Status, &resume, &sm.CloseReason, &sm.Usage.Iterations, &sm.Usage.InputTokens, &sm.Usage.OutputTokens, &sm.Usage.CostUSD,
			&created, &updated, &started, &finished); err != nil {
			return nil, fmt.Errorf("listing tasks: %w", err)
		}
		sm.ResumePending = resume != 0
		sm.CreatedAt, sm.UpdatedAt = fromNanos(created), fromNanos(updated)
		sm.StartedAt, sm.FinishedAt = optTime(started), optTime(finished)
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	return out, nil
}

// ListSummariesJSON implements store.Store: the listing column of each
// task, never decoded. A whole listing is joined by SQLite in one value
// (group_concat over the rows in order): through database/sql every row
// costs about a microsecond, which is most of listing 10,000 tasks. A page
// (opts.Limit) is read row by row, one more than asked, to learn its Next.
func (s *Store) ListSummariesJSON(ctx context.Context, opts store.ListOptions) (store.SummaryPage, error) {
	if opts.Limit > 0 {
		return s.summaryPage(ctx, opts)
	}
	key, gen := listingKey(opts), s.lists.gen.Load()
	if p, ok := s.lists.get(key, gen); ok {
		return p, nil
	}
	q, args, err := s.listQuery(ctx, "listing", opts)
	if err != nil {
		return store.SummaryPage{}, err
	}
	// LIMIT -1 (none) keeps the subquery's ORDER BY from being optimized
	// away; the rows reach group_concat in that order. storetest checks it.
	q = `SELECT count(*), group_concat(listing, ',' || char(10)) FROM (` + q + ` LIMIT -1)`
	var p store.SummaryPage
	if err := s.reads.QueryRowContext(ctx, q, args...).Scan(&p.N, &p.JSON); err != nil {
		return store.SummaryPage{}, fmt.Errorf("listing tasks: %w", err)
	}
	s.lists.put(key, gen, p)
	return p, nil
}

func (s *Store) summaryPage(ctx context.Context, opts store.ListOptions) (store.SummaryPage, error) {
	limit := opts.Limit
	opts.Limit++
	q, args, err := s.listQuery(ctx, "id, listing", opts)
	if err != nil {
		return store.SummaryPage{}, err
	}
	rows, err := s.reads.QueryContext(ctx, q, args...)
	if err != nil {
		return store.SummaryPage{}, fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	var (
		p    store.SummaryPage
		id   string
		last string
		raw  sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&id, &raw); err != nil {
			return store.SummaryPage{}, fmt.Errorf("listing tasks: %w", err)
		}
		if p.N == limit {
			p.Next = task.ID(last)
			break
		}
		if p.N > 0 {
			p.JSON = append(p.JSON, ",\n"...)
		}
		p.JSON = append(p.JSON, raw...)
		p.N++
		last = id
	}
	if err := rows.Err(); err != nil {
		return store.SummaryPage{}, fmt.Errorf("listing tasks: %w", err)
	}
	return p, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
