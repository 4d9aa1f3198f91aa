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
	// 4: the knowledge store (learnings deduplicated, with their sources,
	// searchable) and the Syncer's messages.
	`
ALTER TABLE learnings ADD COLUMN kind TEXT NOT NULL DEFAULT 'explicit';
ALTER TABLE learnings ADD COLUMN files TEXT; -- JSON array; NULL when there are none
-- knowledge.Fingerprint of the summary: the same normalized text is one
-- learning. Empty on rows from before this migration.
ALTER TABLE learnings ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE learnings SET updated_at = created_at;
CREATE INDEX learnings_fingerprint ON learnings (fingerprint);

-- The tasks that found a learning out; the first is learnings.task_id.
CREATE TABLE learning_sources (
	learning_id INTEGER NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
	task_id     TEXT NOT NULL,
	kind        TEXT NOT NULL,
	at          INTEGER NOT NULL,
	PRIMARY KEY (learning_id, task_id)
);
CREATE INDEX learning_sources_task ON learning_sources (task_id);
INSERT INTO learning_sources (learning_id, task_id, kind, at) SELECT id, task_id, 'explicit', created_at FROM learnings;

-- Full-text search over the learnings, kept in step by triggers.
CREATE VIRTUAL TABLE learnings_fts USING fts5 (summary, detail, tags, content = 'learnings', content_rowid = 'id', tokenize = 'porter unicode61');
INSERT INTO learnings_fts (learnings_fts) VALUES ('rebuild');
CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
	INSERT INTO learnings_fts (rowid, summary, detail, tags) VALUES (new.id, new.summary, new.detail, coalesce(new.tags, ''));
END;
CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
	INSERT INTO learnings_fts (learnings_fts, rowid, summary, detail, tags) VALUES ('delete', old.id, old.summary, old.detail, coalesce(old.tags, ''));
END;
CREATE TRIGGER learnings_fts_update AFTER UPDATE OF summary, detail, tags ON learnings BEGIN
	INSERT INTO learnings_fts (learnings_fts, rowid, summary, detail, tags) VALUES ('delete', old.id, old.summary, old.detail, coalesce(old.tags, ''));
	INSERT INTO learnings_fts (rowid, summary, detail, tags) VALUES (new.id, new.summary, new.detail, coalesce(new.tags, ''));
END;

-- What the Syncer relayed. No foreign keys: the history outlives a
-- forgotten learning and a deleted task. A learning reaches a task once.
CREATE TABLE sync_messages (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	learning_id  INTEGER NOT NULL,
	source_id    TEXT NOT NULL,
	task_id      TEXT NOT NULL,
	urgency      TEXT NOT NULL,
	relevance    TEXT NOT NULL DEFAULT '',
	score        REAL NOT NULL DEFAULT 0,
	message      TEXT NOT NULL,
	reason       TEXT NOT NULL DEFAULT '',
	decided_by   TEXT NOT NULL,
	state        TEXT NOT NULL,
	note         TEXT NOT NULL DEFAULT '',
	injection_id INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	queued_at    INTEGER,
	delivered_at INTEGER
);
CREATE UNIQUE INDEX sync_messages_once ON sync_messages (learning_id, task_id);
CREATE INDEX sync_messages_task ON sync_messages (task_id, id);
CREATE INDEX sync_messages_source ON sync_messages (source_id, id);
-- Plain indexes: a partial one cannot serve the store's parameterized
-- queries (injection_id = ?, state IN (?)).
CREATE INDEX sync_messages_injection ON sync_messages (injection_id);
CREATE INDEX sync_messages_state ON sync_messages (state, task_id);
`,
	// 5: the git operation the merge queue began in a task's worktree, so
	// that a restarted daemon knows a half-done one is its own to roll back.
	`
ALTER TABLE merges ADD COLUMN step TEXT NOT NULL DEFAULT '';
ALTER TABLE merges ADD COLUMN step_tip TEXT NOT NULL DEFAULT '';
`,
	// 6: an injection its task never saw because it finished first is
	// returned (returned_at) and leaves the queue.
	`
ALTER TABLE injections ADD COLUMN returned_at INTEGER;
DROP INDEX injections_pending;
CREATE INDEX injections_pending ON injections (task_id, id) WHERE delivered_at IS NULL AND returned_at IS NULL;
`,
	// 7: what listings show of a task (task.Summary), as columns kept in
	// step with data by every task write (taskArgs), so that a listing
	// decodes no task. listing is the Summary encoded as JSON, served as it
	// is: through database/sql each column read costs about as much as the
	// row, so one column is what makes 10,000 tasks list fast. Filled from
	// data by backfills[7].
	`
ALTER TABLE tasks ADD COLUMN headline TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN persona TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN engine TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN resume_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN close_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN iterations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN started_at INTEGER;
ALTER TABLE tasks ADD COLUMN finished_at INTEGER;
ALTER TABLE tasks ADD COLUMN listing TEXT NOT NULL DEFAULT '{}';
`,
	// 8: watcher sessions and their evaluations; the cost ledger marks a
	// watcher session's charges with its id.
	`
CREATE TABLE watch_sessions (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	status     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	data       TEXT NOT NULL -- store.WatchSession as JSON
);

-- No foreign key, like the ledger: an evaluation is history and outlives
-- its session's row.
CREATE TABLE watch_evaluations (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL,
	task_id    TEXT NOT NULL,
	at         INTEGER NOT NULL,
	data       TEXT NOT NULL -- store.WatchEvaluation as JSON
);
CREATE INDEX watch_evaluations_session ON watch_evaluations (session_id, id);

ALTER TABLE costs ADD COLUMN watcher TEXT NOT NULL DEFAULT '';
`,
}

// backfills run after the migration of their number, in its transaction:
// what SQL alone cannot compute from the stored JSON the way Go does.
var backfills = map[int]func(ctx context.Context, tx *sql.Tx) error{
	7: backfillTaskColumns,
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
	if fill := backfills[version]; fill != nil {
		if err := fill(ctx, tx); err != nil {
			return fmt.Errorf("applying migration %d: %w", version, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
		return fmt.Errorf("recording schema version %d: %w", version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing migration %d: %w", version, err)
	}
	return nil
}
