// Package sqlite implements store.Store on SQLite through modernc.org/sqlite
// (pure Go), in WAL mode, with versioned migrations.
//
// One goroutine, the writer, owns the only write connection. Every write is an
// operation sent to it; the writer takes all operations waiting at that moment and
// commits them in one transaction (group commit), each inside its own savepoint so
// one failing operation does not spoil the others. It assigns event IDs in commit
// order, hands the committed events to the publish function, then answers the
// callers. The writer keeps the statements it runs prepared on its connection
// (stmts.go). Reads use a separate pool of read-only connections and never wait
// for the writer; their statements are prepared once too (readstmts.go). The
// writer also keeps the event log's row count and last ID for Counts
// (counts.go). Close stops intake, lets the writer drain and commit what was
// queued, and closes both pools.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ store.Store = (*Store)(nil)

// Options configures Open.
type Options struct {
	// Publish receives every committed logged event, in ID order, on the
	// writer's goroutine; it must not block (event.Bus.Publish does not).
	Publish func(...event.Event)
	// QueueSize is how many write operations may wait for the writer. Default 4096.
	QueueSize int
	// MaxBatch caps how many operations one transaction commits. Default 4096.
	MaxBatch int
	// ReadConns is the size of the read pool. Default 4.
	ReadConns int
	// OnWriteError hears of failed operations nobody waits for (EmitEvents);
	// the daemon logs them. Default: ignored.
	OnWriteError func(error)
}

// Store is a store.Store on one SQLite database file: every role of it.
type Store struct {
	path    string
	wdb     *sql.DB    // one connection, used only by the writer goroutine
	rdb     *sql.DB    // read-only pool
	reads   *readStmts // the read pool's prepared statements (readstmts.go)
	publish func(...event.Event)
	onError func(error)

	ops        chan op
	maxBatch   int
	writerDone chan struct{}
	stmts      *stmtCache // the writer's prepared statements; owned by the writer goroutine

	mu     sync.RWMutex // guards closed; held (read) while sending on ops
	closed bool

	nextID int64 // next event ID; owned by the writer goroutine after Open

	// eventRows and lastEventID are the event log's row count and highest
	// ID as of the last commit, kept by the writer (counts.go) so that
	// Counts, which every status poll calls, does not scan the log.
	eventRows, lastEventID atomic.Int64

	lists        listCache // whole listings, while no task changes
	tasksWritten bool      // the batch being written wrote tasks; owned by the writer goroutine

	counts        countCache // Counts' task and queue counts, while no status or injection changes
	statusWritten bool       // the batch being written may have changed a task's status; owned by the writer goroutine

	queues            queueCache // the queues read empty, while no injection changes
	injectionsWritten bool       // the batch being written wrote injections; owned by the writer goroutine

	kept map[task.ID]keptTask // tasks as the checkpoints last wrote them; owned by the writer goroutine
	// keptHits and keptMisses count readTaskKept's outcomes; owned by the writer goroutine.
	keptHits, keptMisses int
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path, migrates it to the
// current schema, and starts the writer. The caller must Close the store.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 4096
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.Publish == nil {
		opts.Publish = func(...event.Event) {}
	}
	if opts.OnWriteError == nil {
		opts.OnWriteError = func(error) {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the data directory for %s: %w", path, err)
	}
	// SQLite gives the -wal and -shm files the mode of the database file:
	// creating it 0600 first keeps all three private.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	f.Close()
	wdb, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	wdb.SetMaxOpenConns(1)
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("migrating %s: %w", path, err)
	}
	rdb, err := openDB(path, true)
	if err != nil {
		wdb.Close()
		return nil, err
	}
	rdb.SetMaxOpenConns(opts.ReadConns)
	rdb.SetMaxIdleConns(opts.ReadConns)
	s := &Store{
		path:       path,
		wdb:        wdb,
		rdb:        rdb,
		reads:      newReadStmts(rdb),
		publish:    opts.Publish,
		onError:    opts.OnWriteError,
		ops:        make(chan op, opts.QueueSize),
		maxBatch:   opts.MaxBatch,
		writerDone: make(chan struct{}),
		stmts:      newStmtCache(),
	}
	var rows int64
	if err := wdb.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(id), 0) FROM events`).Scan(&rows, &s.nextID); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("reading the last event id of %s: %w", path, err)
	}
	s.eventRows.Store(rows)
	s.lastEventID.Store(s.nextID)
	s.nextID++
	go s.writeLoop()
	return s, nil
}

func openDB(path string, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	if readOnly {
		q.Add("_pragma", "query_only(ON)")
	} else {
		q.Add("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// SetMaxPages caps the database at n pages on the write connection (SQLite's
// max_page_count; never below its current size), or lifts the cap with 0.
// A write that needs more fails as on a full disk (store.ErrFull). It
// returns the cap in force. The daemon does not cap its store; tests fill
// a real store with it.
func (s *Store) SetMaxPages(ctx context.Context, n int64) (int64, error) {
	if n <= 0 {
		n = 4294967294 // SQLite's largest
	}
	var got int64
	_, err := s.do(ctx, func(w *wtx) error {
		return w.tx.QueryRowContext(w.ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, n)).Scan(&got)
	}, false)
	return got, err
}

// PageCount returns the database's size in pages as the writer sees it.
func (s *Store) PageCount(ctx context.Context) (int64, error) {
	var n int64
	_, err := s.do(ctx, func(w *wtx) error {
		return w.tx.QueryRowContext(w.ctx, `PRAGMA page_count`).Scan(&n)
	}, false)
	return n, err
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close stops intake, commits everything queued, and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.writerDone
	return errors.Join(s.stmts.close(), s.reads.close(), s.rdb.Close(), s.wdb.Close())
}

// Flush waits until everything queued before the call is committed.
func (s *Store) Flush(ctx context.Context) error {
	_, err := s.do(ctx, nil, false)
	return err
}
