package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxReadPrepared bounds the read pool's statement cache. The reads have
// fixed texts, or texts built from a few optional filters; the bound only
// keeps a query built per call (an IN list of any length) from filling
// memory: past it, new texts run unprepared.
const maxReadPrepared = 256

// readStmts keeps the read pool's statements prepared. Preparing (parsing
// and planning the SQL) cost about as much as running the small reads that
// serve every model call and status poll, and a query that is not a
// prepared statement is prepared again on every call. A statement text is
// prepared on first use; database/sql then prepares it once on each
// connection of the pool it runs on and reuses it there. Safe for
// concurrent use.
type readStmts struct {
	db *sql.DB

	mu     sync.RWMutex
	m      map[string]*sql.Stmt // nil: preparing failed, run unprepared
	closed bool
}

func newReadStmts(db *sql.DB) *readStmts {
	return &readStmts{db: db, m: map[string]*sql.Stmt{}}
}

// stmt returns query's prepared statement, preparing it on first use, or
// nil to run query unprepared (preparing failed, the cache is full or
// closed). A statement that does not prepare keeps running unprepared,
// where its error, if it has one, reaches the caller.
func (r *readStmts) stmt(ctx context.Context, query string) *sql.Stmt {
	r.mu.RLock()
	st, ok := r.m[query]
	full := len(r.m) >= maxReadPrepared
	closed := r.closed
	r.mu.RUnlock()
	if ok || full || closed {
		return st
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the caller gave up; the text may well prepare next time
		}
		st = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.m[query]; ok || r.closed || len(r.m) >= maxReadPrepared {
		// Another reader prepared it first, or Close ran meanwhile.
		if st != nil {
			st.Close()
		}
		return prev
	}
	r.m[query] = st
	return st
}

// QueryContext runs a query on the read pool, prepared.
func (r *readStmts) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query on the read pool, prepared.
func (r *readStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.db.QueryRowContext(ctx, query, args...)
}

// close closes the prepared statements; later reads run unprepared (and
// fail once the pool is closed).
func (r *readStmts) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var first error
	for q, st := range r.m {
		if st != nil {
			if err := st.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(r.m, q)
	}
	return first
}
