package sqlite

import (
	"context"
	"database/sql"
)

// maxPrepared bounds the writer's statement cache. The writer's statements
// have fixed texts, a few dozen of them; the bound only guards against a
// future query built per call filling memory.
const maxPrepared = 128

// stmtCache keeps the writer's statements prepared on its connection.
// Parsing SQL is about a third of what a small write costs (a checkpoint
// runs seven statements), so each statement text is prepared once and its
// compiled form reused in every later transaction.
//
// A statement cannot be prepared while a batch runs: the transaction holds
// the only write connection. So a statement first runs unprepared, its text
// is noted, and the writer prepares the noted texts after the batch commits.
// It is owned by the writer goroutine; nothing else touches it.
type stmtCache struct {
	prepared map[string]*sql.Stmt // nil: preparing failed, run unprepared
	wanted   map[string]struct{}  // ran unprepared in the current batch
}

func newStmtCache() *stmtCache {
	return &stmtCache{prepared: map[string]*sql.Stmt{}, wanted: map[string]struct{}{}}
}

// batchStmts are the cache's statements bound to one batch's transaction,
// by text: Tx.StmtContext is called once per statement and batch.
type batchStmts struct {
	c     *stmtCache
	tx    *sql.Tx
	bound map[string]*sql.Stmt
}

func (c *stmtCache) bind(tx *sql.Tx) *batchStmts {
	return &batchStmts{c: c, tx: tx, bound: map[string]*sql.Stmt{}}
}

// stmt returns query's statement bound to the transaction, or nil when it
// is not prepared (yet).
func (b *batchStmts) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := b.bound[query]; ok {
		return st
	}
	ps, ok := b.c.prepared[query]
	if !ok {
		if len(b.c.prepared)+len(b.c.wanted) < maxPrepared {
			b.c.wanted[query] = struct{}{}
		}
		return nil
	}
	if ps == nil {
		return nil
	}
	st := b.tx.StmtContext(ctx, ps)
	b.bound[query] = st
	return st
}

func (b *batchStmts) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := b.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return b.tx.ExecContext(ctx, query, args...)
}

func (b *batchStmts) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := b.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return b.tx.QueryContext(ctx, query, args...)
}

func (b *batchStmts) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := b.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return b.tx.QueryRowContext(ctx, query, args...)
}

// prepareWanted prepares the statements noted during the last batch. It runs
// between batches, when the write connection is free. A statement that does
// not prepare is remembered as such and keeps running unprepared, where its
// error, if it has one, reaches the operation that ran it.
func (c *stmtCache) prepareWanted(ctx context.Context, db *sql.DB) {
	for q := range c.wanted {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			st = nil
		}
		c.prepared[q] = st
	}
	clear(c.wanted)
}

// close closes the prepared statements.
func (c *stmtCache) close() error {
	var first error
	for _, st := range c.prepared {
		if st == nil {
			continue
		}
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
