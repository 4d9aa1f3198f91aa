package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; the database's user_version says how many
// ran. Never edit one that has shipped: append a new one.
var migrations = []string{
	// 1: tasks, dependencies, injection queues, event log.
	`
CREATE TABLE tasks (
	id         TEXT PRIMARY KEY,
	status     TEXT NOT NULL,
	priority   INTEGER NOT NULL,
	parent_id  TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	-- The whole task.Task as JSON; the columns above repeat what queries filter
	-- and sort on. Lists are served straight from this column.
	data       TEXT NOT NULL
);
CREATE INDEX tasks_status ON tasks (status, created_at);
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_parent ON tasks (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE dependencies (
	task_id    TEXT NOT NULL REFERENCES tasks (id),
	blocker_id TEXT NOT NULL REFERENCES tasks (id),
	created_at INTEGER NOT NULL,
	PRIMARY KEY (task_id, blocker_id)
);
CREATE INDEX dependencies_blocker ON dependencies (blocker_id);

CREATE TABLE injections (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id      TEXT NOT NULL REFERENCES tasks (id),
	source       TEXT NOT NULL,
	text         TEXT NOT NULL,
	urgent       INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	delivered_at INTEGER
);
CREATE INDEX injections_pending ON injections (task_id, id) WHERE delivered_at IS NULL;

CREATE TABLE events (
	id      INTEGER PRIMARY KEY,
	time    INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	task_id TEXT,
	data    TEXT
);
CREATE INDEX events_task ON events (task_id, id) WHERE task_id IS NOT NULL;
CREATE INDEX events_time ON events (time);
`,
	// 2: the agent runtime: injection kinds, conversations, the cost ledger,
	// learnings.
	`
ALTER TABLE injections ADD COLUMN kind TEXT NOT NULL DEFAULT 'message';
-- The kind's attributes as a JSON object; NULL when there are none.
ALTER TABLE injections ADD COLUMN attrs TEXT;

-- One row per message of a task's conversation. Seq is dense from 0 (the
-- store only appends at the current length or replaces the whole), so the
-- length is MAX(seq)+1, read from the primary key.
CREATE TABLE conversation_entries (
	task_id TEXT NOT NULL REFERENCES tasks (id),
	seq     INTEGER NOT NULL,
	turn    INTEGER NOT NULL,
	at      INTEGER NOT NULL,
	message TEXT NOT NULL, -- llm.Message as JSON
	PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

-- One row per model call. No foreign key: the ledger is the record of money
-- spent and outlives whatever happens to the task's row.
CREATE TABLE costs (
	id                 INTEGER PRIMARY KEY,
	task_id            TEXT NOT NULL,
	at                 INTEGER NOT NULL,
	provider           TEXT NOT NULL,
	model              TEXT NOT NULL,
	input_tokens       INTEGER NOT NULL,
	output_tokens      INTEGER NOT NULL,
	cache_read_tokens  INTEGER NOT NULL,
	cache_write_tokens INTEGER NOT NULL,
	cost_usd           REAL NOT NULL,
	duration_ms        INTEGER NOT NULL
);
-- Covers Spent (a range of at, summing cost_usd) without touching the table.
CREATE INDEX costs_at ON costs (at, cost_usd);
CREATE INDEX costs_task ON costs (task_id, at);

-- AUTOINCREMENT: an ID is never reused, so AfterID cursors stay valid. No
-- foreign key, like the ledger: what was learnt outlives the task's row.
CREATE TABLE learnings (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT NOT NULL,
	summary    TEXT NOT NULL,
	detail     TEXT NOT NULL,
	tags       TEXT, -- JSON array; NULL when there are none
	created_at INTEGER NOT NULL
);
CREATE INDEX learnings_task ON learnings (task_id, id);
`,
	// 3: the worktree registry and the merge queue.
	`
-- One row per task: where its worktree is and what became of its branch.
-- Empty strings, not NULLs, for what is not known yet (archive, landed, ...).
CREATE TABLE worktrees (
	task_id     TEXT PRIMARY KEY REFERENCES tasks (id),
	repo        TEXT NOT NULL,
	branch      TEXT NOT NULL,
	base        TEXT NOT NULL,
	base_commit TEXT NOT NULL,
	path        TEXT NOT NULL,
	state       TEXT NOT NULL,
	port        INTEGER NOT NULL DEFAULT 0,
	archive     TEXT NOT NULL DEFAULT '',
	landed      TEXT NOT NULL DEFAULT '',
	landed_tip  TEXT NOT NULL DEFAULT '',
	note        TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);
CREATE INDEX worktrees_repo ON worktrees (repo, created_at, task_id);

-- AUTOINCREMENT: an entry's ID is never reused, so events naming it stay
-- unambiguous.
CREATE TABLE merges (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id     TEXT NOT NULL REFERENCES tasks (id),
	repo        TEXT NOT NULL,
	branch      TEXT NOT NULL,
	target      TEXT NOT NULL,
	state       TEXT NOT NULL,
	detail      TEXT NOT NULL DEFAULT '',
	files       TEXT, -- JSON array; NULL when there are none
	attempts    INTEGER NOT NULL DEFAULT 0,
	commit_sha  TEXT NOT NULL DEFAULT '',
	pr_url      TEXT NOT NULL DEFAULT '',
	enqueued_at INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	started_at  INTEGER,
	finished_at INTEGER
);
CREATE INDEX merges_task ON merges (task_id);
CREATE INDEX merges_state ON merges (state);
CREATE INDEX merges_queue ON merges (repo, target, id);
-- At most one open entry (store.MergeState.Open) per task. The store checks
-- it first to say which entry is in the way; this is the backstop.
CREATE UNIQUE INDEX merges_open_task ON merges (task_id) WHERE state IN ('queued', 'running', 'waiting');
`,
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int { return len(migrations) }

func migrate(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("the database has schema version %d, newer than this build's %d: upgrade neuraphage", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if err := applyMigration(ctx, db, i+1, migrations[i]); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, version int, ddl string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning migration %d: %w", version, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("applying migration %d: %w", version, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
		return fmt.Errorf("recording schema version %d: %w", version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing migration %d: %w", version, err)
	}
	return nil
}
