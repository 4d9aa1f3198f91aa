package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// op is one write operation for the writer goroutine.
type op struct {
	// apply runs inside the batch's transaction; nil for a flush marker.
	apply func(w *wtx) error
	// done receives the result; nil when the caller does not wait.
	done chan result
}

type result struct {
	events []event.Event
	err    error
}

// wtx is what an operation sees of the write transaction.
type wtx struct {
	ctx    context.Context
	tx     *sql.Tx
	stmts  *batchStmts
	s      *Store
	events []event.Event
	// recount, when set, is the event log's row count and highest ID
	// after the operation's deletions (PruneEvents).
	recount *eventTally
}

// exec runs a statement in the transaction, prepared when the writer has
// prepared it.
func (w *wtx) exec(query string, args ...any) (sql.Result, error) {
	if w.s.lists.writesTasks(query) {
		w.s.tasksWritten = true
		if query != updateTaskBodySQL { // which leaves the status column out
			w.s.statusWritten = true
		}
	}
	if w.s.queues.writesInjections(query) {
		w.s.injectionsWritten = true
	}
	return w.stmts.exec(w.ctx, query, args...)
}

// query runs a query in the transaction, prepared when the writer has
// prepared it.
func (w *wtx) query(query string, args ...any) (*sql.Rows, error) {
	return w.stmts.query(w.ctx, query, args...)
}

// queryRow runs a single-row query in the transaction, prepared when the
// writer has prepared it.
func (w *wtx) queryRow(query string, args ...any) *sql.Row {
	return w.stmts.queryRow(w.ctx, query, args...)
}

// emit appends logged events to the log inside the transaction, assigning IDs.
func (w *wtx) emit(evs ...event.Event) error {
	enc, err := encodeEvents(evs)
	if err != nil {
		return err
	}
	return w.emitEncoded(enc)
}

// encodedEvents are logged events with their payloads encoded, each as the
// value of the data column: encoded once, on the caller's goroutine where
// it can, so that the writer only runs statements.
type encodedEvents struct {
	evs  []event.Event
	data []any // the payload's JSON as a string, or nil
}

// encodeEvents encodes the payloads of evs, which must all be logged
// (not transient).
func encodeEvents(evs []event.Event) (encodedEvents, error) {
	enc := encodedEvents{evs: evs, data: make([]any, len(evs))}
	for i, e := range evs {
		if e.Transient() {
			return encodedEvents{}, fmt.Errorf("appending a %s event: transient events are not logged", e.Kind)
		}
		data, err := event.MarshalPayload(e.Payload)
		if err != nil {
			return encodedEvents{}, err
		}
		enc.data[i] = nullBytes(data)
	}
	return enc, nil
}

// maxEventRows is how many events one INSERT appends at most.
const maxEventRows = 8

// insertEventsSQL[n] appends n events.
var insertEventsSQL = func() (q [maxEventRows + 1]string) {
	for n := 1; n <= maxEventRows; n++ {
		q[n] = `INSERT INTO events (id, time, kind, task_id, data) VALUES ` +
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?), `, n), ", ")
	}
	return q
}()

// emitEncoded appends encoded events to the log inside the transaction,
// assigning IDs, up to maxEventRows of them in one statement.
func (w *wtx) emitEncoded(enc encodedEvents) error {
	now := time.Time{}
	args := make([]any, 0, 5*min(len(enc.evs), maxEventRows))
	for start := 0; start < len(enc.evs); start += maxEventRows {
		chunk := enc.evs[start:min(start+maxEventRows, len(enc.evs))]
		args = args[:0]
		id := w.s.nextID
		for i, e := range chunk {
			if e.Time.IsZero() {
				if now.IsZero() {
					now = time.Now().UTC()
				}
				e.Time = now
			}
			args = append(args, id+int64(i), e.Time.UnixNano(), string(e.Kind), nullString(string(e.TaskID)), enc.data[start+i])
		}
		if _, err := w.exec(insertEventsSQL[len(chunk)], args...); err != nil {
			return fmt.Errorf("appending a %s event: %w", chunk[0].Kind, err)
		}
		for i, e := range chunk {
			if e.Time.IsZero() {
				e.Time = now
			}
			e.ID = id + int64(i)
			w.events = append(w.events, e)
		}
		w.s.nextID += int64(len(chunk))
	}
	return nil
}

// do sends an operation to the writer and, when wait is true, waits for its result.
func (s *Store) do(ctx context.Context, apply func(*wtx) error, noWait bool) ([]event.Event, error) {
	o := op{apply: apply}
	if !noWait {
		o.done = make(chan result, 1)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, store.ErrClosed
	}
	select {
	case s.ops <- o:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return nil, ctx.Err()
	}
	if noWait {
		return nil, nil
	}
	// Once queued the operation will be committed or refused; a caller that
	// stops waiting does not undo it, but is told it did not wait.
	select {
	case r := <-o.done:
		return r.events, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Store) writeLoop() {
	defer close(s.writerDone)
	batch := make([]op, 0, 64)
	for o := range s.ops {
		batch = append(batch[:0], o)
	drain:
		for len(batch) < s.maxBatch {
			select {
			case o, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			default:
				break drain
			}
		}
		s.commit(batch)
		clear(batch)
	}
}

// commit runs a batch of operations in one transaction.
func (s *Store) commit(batch []op) {
	// Writes run detached from any caller's context: a caller that gives up
	// must not abort the other operations of its batch.
	ctx := context.Background()
	results := make([]result, len(batch))
	startID := s.nextID
	tally := eventTally{rows: s.eventRows.Load(), last: s.lastEventID.Load()}
	s.tasksWritten, s.injectionsWritten, s.statusWritten = false, false, false
	var committed []event.Event
	err := func() error {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("beginning a write transaction: %w", err)
		}
		defer tx.Rollback()
		stmts := s.stmts.bind(tx)
		for i, o := range batch {
			if o.apply == nil {
				continue
			}
			if _, err := stmts.exec(ctx, `SAVEPOINT op`); err != nil {
				return fmt.Errorf("opening a savepoint: %w", err)
			}
			opStart := s.nextID
			w := &wtx{ctx: ctx, tx: tx, stmts: stmts, s: s}
			if err := o.apply(w); err != nil {
				results[i].err = err
				s.nextID = opStart
				if _, rerr := stmts.exec(ctx, `ROLLBACK TO op`); rerr != nil {
					return fmt.Errorf("rolling back an operation (%v): %w", err, rerr)
				}
			} else {
				results[i].events = w.events
				committed = append(committed, w.events...)
				tally.add(w)
			}
			if _, err := stmts.exec(ctx, `RELEASE op`); err != nil {
				return fmt.Errorf("releasing a savepoint: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("committing %d operations: %w", len(batch), err)
		}
		return nil
	}()
	if err == nil {
		// Before any caller hears of the commit, as the caches below.
		s.eventRows.Store(tally.rows)
		s.lastEventID.Store(tally.last)
	}
	if s.tasksWritten {
		// After the commit (or its failure) and before any caller hears of
		// it: a listing asked for once a write is acknowledged shows it.
		s.lists.wrote()
	}
	if s.statusWritten {
		s.counts.statusGen.Add(1) // the same, for Counts
	}
	if s.injectionsWritten {
		s.queues.wrote() // the same: a queue read once a write is acknowledged shows it
	}
	// The connection is free again: prepare what ran unprepared.
	s.stmts.prepareWanted(ctx, s.wdb)
	if err != nil {
		s.nextID = startID
		committed = nil
		for i := range results {
			if results[i].err == nil {
				results[i] = result{err: err}
			}
		}
	}
	if len(committed) > 0 {
		s.publish(committed...)
	}
	for i, o := range batch {
		results[i].err = full(results[i].err)
		switch {
		case o.done != nil:
			o.done <- results[i]
		case results[i].err != nil:
			s.onError(results[i].err)
		}
	}
}

// full marks err as store.ErrFull when it says the disk (or the
// database's size cap) is full: SQLite's SQLITE_FULL, or ENOSPC from the
// file system.
func full(err error) error {
	if err == nil || errors.Is(err, store.ErrFull) {
		return err
	}
	var se interface{ Code() int }
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL || errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (%w)", err, store.ErrFull)
	}
	return err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// isNoRows reports whether err is sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// nanosOrNil stores an optional time: NULL when nil.
func nanosOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}
