// Package store defines what Neuraphage keeps durably: tasks, the dependencies
// between them, per-task injection queues, the event log, and what tasks'
// runs leave behind: conversations, the cost ledger and learnings. The sqlite
// subpackage implements it on SQLite; storetest is the conformance suite every
// implementation passes.
//
// # Contract
//
// Writes are atomic and durable when they return: a task created or changed, and
// the events returned with the change, survive a kill -9 of the process once the
// call has returned without error. Events are given IDs in commit order; an
// implementation hands every committed logged event, in ID order, to the publish
// function it was opened with, after the commit and before the writing call
// returns. Reads see every write that returned before they started.
//
// All methods are safe for concurrent use and honour their context.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// ErrNotFound is returned (wrapped) when a task or queue entry does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is returned (wrapped) when creating something whose ID is taken.
var ErrExists = errors.New("already exists")

// ErrFull is returned (wrapped) when a write failed because the data disk
// (or the database's size cap) is full: the write may succeed once space
// returns.
var ErrFull = errors.New("the data disk is full")

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("store closed")

// AmbiguousError is returned when a task reference matches several tasks.
type AmbiguousError struct {
	Ref     string
	Matches []task.ID
}

func (e *AmbiguousError) Error() string {
	ids := make([]string, len(e.Matches))
	for i, id := range e.Matches {
		ids[i] = string(id)
	}
	return fmt.Sprintf("%q matches several tasks (%s); type more of the id", e.Ref, strings.Join(ids, ", "))
}

// Mutation changes a task inside a write transaction and returns the events
// that record the change, committed with it. It runs on the store's writer:
// it must be quick and do no I/O. Returning an error abandons the change.
type Mutation func(t *task.Task) ([]event.Event, error)

// ListOptions selects tasks.
type ListOptions struct {
	// Statuses selects tasks in any of these statuses; empty selects all.
	Statuses []task.Status
	// ParentID selects the children of one task.
	ParentID task.ID
	// After selects the tasks listed after this one (created later, or at
	// the same time with a greater ID): the cursor of the next page. It
	// must name a stored task (else ErrNotFound).
	After task.ID
	// Limit caps the result; 0 means no cap.
	Limit int
}

// Counts summarizes the store for status displays.
type Counts struct {
	Tasks   map[task.Status]int `json:"tasks"`
	Events  int64               `json:"events"`
	LastID  int64               `json:"last_event_id"`
	Pending int                 `json:"pending_injections"`
}

// Store is Neuraphage's durable state: every role below. The sqlite
// subpackage implements it and storetest covers all of it. Only the
// composition root (daemon) holds a whole Store; every other package declares
// the few methods it needs, usually by embedding one or two of these roles.
type Store interface {
	Tasks
	Dependencies
	InjectionQueue
	EventLog
	Runs
	CostLedger
	Knowledge
	SyncMessageLog
	Worktrees
	MergeQueue
	WatchSessions
	WatchLog
	Admin
}

// Tasks is the task table.
type Tasks interface {
	// CreateTask inserts t with the events recording its creation. A taken ID
	// is ErrExists.
	CreateTask(ctx context.Context, t task.Task, evs ...event.Event) ([]event.Event, error)
	// UpdateTask applies m to the task with this id and stores the result with
	// m's events, atomically. It returns the task as stored and the committed
	// events (with IDs). Two rules keep every acknowledged message accounted
	// for: m may set Task.Closing only while the task's queue holds no
	// undelivered injection that holds its end (inject.Injection.HoldsEnd;
	// else *PendingError, nothing applied); and a move
	// to a terminal status returns the injections still queued (ReturnedAt
	// set, an event.TaskReturned), in the same commit.
	UpdateTask(ctx context.Context, id task.ID, m Mutation) (task.Task, []event.Event, error)
	// GetTask returns one task.
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	// ResolveTask finds the task a user's reference names: an exact ID or a
	// unique prefix of one (normalized by task.NormalizeRef). No match is
	// ErrNotFound; several are *AmbiguousError.
	ResolveTask(ctx context.Context, ref string) (task.ID, error)
	// ListTasks returns tasks ordered by creation time, oldest first.
	ListTasks(ctx context.Context, opts ListOptions) ([]task.Task, error)
	// ListSummaries is ListTasks returning what listings show of each task
	// (task.Summary, equal to Task.Summarize of the stored task), read
	// without decoding the tasks: the fast path for listing many tasks.
	ListSummaries(ctx context.Context, opts ListOptions) ([]task.Summary, error)
	// ListSummariesJSON is ListSummaries with each summary encoded as
	// encoding/json encodes a task.Summary, kept so by the store and served
	// without decoding or encoding anything. With opts.Limit it says whether
	// more tasks follow (SummaryPage.Next).
	ListSummariesJSON(ctx context.Context, opts ListOptions) (SummaryPage, error)
}

// SummaryPage is a listing as ListSummariesJSON serves it.
type SummaryPage struct {
	// JSON is the N summaries in order joined by ",\n": the inside of a
	// JSON array (empty when N is 0).
	JSON []byte
	N    int
	// Next is set when opts.Limit cut the listing short: the ID of its
	// last task, the After of the next page.
	Next task.ID
}

// Dependencies are the edges "a task waits for another".
type Dependencies interface {
	// AddDependency records that dep.Task waits for dep.Blocker, with evs.
	// Both must exist and the edge must not close a cycle (*CycleError).
	AddDependency(ctx context.Context, dep task.Dependency, evs ...event.Event) ([]event.Event, error)
	// Blockers returns the tasks id waits for.
	Blockers(ctx context.Context, id task.ID) ([]task.ID, error)
	// Readiness judges whether id may be dispatched as far as its blockers go.
	Readiness(ctx context.Context, id task.ID) (task.Readiness, error)
}

// InjectionQueue is the per-task durable queue of injections.
type InjectionQueue interface {
	// Enqueue adds inj to its task's queue with an event built from its ID by
	// record, and returns the stored injection and committed events. An
	// empty Kind is stored as inject.Message; Quiet is not stored. A task
	// that is finished or Closing takes nothing (*task.FinishedError),
	// decided in the same transaction as the insert.
	Enqueue(ctx context.Context, inj inject.Injection, record func(inject.Injection) []event.Event) (inject.Injection, []event.Event, error)
	// EnqueueMany is Enqueue for several injections in one transaction:
	// evs are logged first, then each injection is added, followed by the
	// events record(i, stored) builds for it (nil record: none). A task
	// that takes nothing (finished or Closing: *task.FinishedError; unknown:
	// ErrNotFound) is reported in its place in the result and the others
	// are queued; any other failure queues none and is the error. The
	// result has one Enqueued per injection, in order, and the committed
	// events.
	EnqueueMany(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]Enqueued, []event.Event, error)
	// Pending returns a task's undelivered injections in queue order, their
	// typed fields parsed (an unknown stored kind reads as inject.Message).
	Pending(ctx context.Context, id task.ID) ([]inject.Injection, error)
	// MarkDelivered records that injections were delivered at the given time.
	MarkDelivered(ctx context.Context, ids []int64, at time.Time, evs ...event.Event) ([]event.Event, error)
	// Returned returns the injections a task never saw because it finished
	// first (see UpdateTask), in queue order, ReturnedAt set.
	Returned(ctx context.Context, id task.ID) ([]inject.Injection, error)
}

// Enqueued is what became of one injection of EnqueueMany: stored (ID
// set) when Err is nil, else why its task took nothing.
type Enqueued struct {
	Injection inject.Injection
	Err       error
}

// PendingError refuses to close a task whose queue holds injections the
// run must see before it ends (inject.Injection.HoldsEnd): the run must
// deliver them first.
type PendingError struct {
	ID      task.ID
	Pending []int64
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("task %s has %d undelivered messages", e.ID, len(e.Pending))
}

// EventLog is the durable event log.
type EventLog interface {
	// AppendEvents commits logged events and returns them with their IDs.
	// Transient events are refused.
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	// EmitEvents queues logged events for the writer without waiting for the
	// commit: the hot path. They may be lost on kill -9 while still queued.
	EmitEvents(ctx context.Context, evs ...event.Event) error
	// ReadEvents returns logged events matching q in ID order.
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
	// LastEventID returns the highest event ID in the log, 0 when empty.
	LastEventID(ctx context.Context) (int64, error)
	// PruneEvents deletes logged events older than before and returns how many.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

// Runs is what tasks' runs leave behind: their conversations, committed
// step by step.
type Runs interface {
	// Checkpoint commits one step of a task's run atomically: conversation
	// entries, delivered injections, cost-ledger charges, a change of the
	// task and the events recording them. See Checkpoint.
	Checkpoint(ctx context.Context, cp Checkpoint, evs ...event.Event) (task.Task, []event.Event, error)
	// Conversation returns a task's stored conversation in sequence order,
	// the entries with Seq >= from. An unknown task is ErrNotFound.
	Conversation(ctx context.Context, id task.ID, from int) ([]Entry, error)
	// ConversationLen returns the number of entries of a task's conversation.
	// An unknown task is ErrNotFound.
	ConversationLen(ctx context.Context, id task.ID) (int, error)
}

// CostLedger reads the cost ledger (Checkpoint writes it).
type CostLedger interface {
	// Costs summarizes the cost ledger, one row per group ordered by key. An
	// unknown grouping is an error.
	Costs(ctx context.Context, q CostQuery) ([]CostRow, error)
	// Spent returns the total cost of the charges at or after since (zero
	// time: all of them).
	Spent(ctx context.Context, since time.Time) (float64, error)
}

// Knowledge is the knowledge store: learnings and their sources.
type Knowledge interface {
	// RecordLearning stores a learning of an existing task (else
	// ErrNotFound), deduplicated: when a stored learning has the same
	// normalized summary, or one similar enough (l.Similarity), the task
	// is added to its sources instead (Merged is set). The events built by
	// record are committed with it; it returns the learning as stored.
	RecordLearning(ctx context.Context, l Learning, record func(Learning) []event.Event) (Learning, []event.Event, error)
	// Learnings returns stored learnings matching q, oldest (lowest ID)
	// first, or the best matches first with q.Search.
	Learnings(ctx context.Context, q LearningQuery) ([]Learning, error)
	// GetLearning returns one learning with its sources, ErrNotFound when
	// none.
	GetLearning(ctx context.Context, id int64) (Learning, error)
	// ForgetLearning deletes a learning and its sources (its sync messages
	// stay, as history) with the events built by record.
	ForgetLearning(ctx context.Context, id int64, record func(Learning) []event.Event) (Learning, []event.Event, error)
}

// SyncMessageLog is the syncer's record of the learnings it sent to tasks.
type SyncMessageLog interface {
	// AddSyncMessage stores a sync message with the events built from it
	// by record. A learning already sent to the task is ErrExists.
	AddSyncMessage(ctx context.Context, m SyncMessage, record func(SyncMessage) []event.Event) (SyncMessage, []event.Event, error)
	// UpdateSyncMessage applies mut to a stored message and stores the
	// result with mut's events, atomically.
	UpdateSyncMessage(ctx context.Context, id int64, mut func(*SyncMessage) ([]event.Event, error)) (SyncMessage, []event.Event, error)
	// SyncMessages returns the messages matching q.
	SyncMessages(ctx context.Context, q SyncQuery) ([]SyncMessage, error)
}

// Worktrees are the records of tasks' git worktrees.
type Worktrees interface {
	// PutWorktree stores a task's worktree record (insert or replace; one
	// per task) with evs. The task must exist (else ErrNotFound).
	PutWorktree(ctx context.Context, w Worktree, evs ...event.Event) ([]event.Event, error)
	// GetWorktree returns a task's worktree record, ErrNotFound when none.
	GetWorktree(ctx context.Context, id task.ID) (Worktree, error)
	// ListWorktrees returns the records of one repository ("" for all),
	// ordered by creation time, oldest first.
	ListWorktrees(ctx context.Context, repo string) ([]Worktree, error)
}

// MergeQueue is the merge queue.
type MergeQueue interface {
	// EnqueueMerge adds an entry to the merge queue with the events built
	// from its ID by record. The task must exist (else ErrNotFound) and
	// have no open entry (else ErrExists). ID, EnqueuedAt and UpdatedAt are
	// set by the store when zero; State is set to queued when empty.
	EnqueueMerge(ctx context.Context, m MergeEntry, record func(MergeEntry) []event.Event) (MergeEntry, []event.Event, error)
	// UpdateMerge applies mut to the entry with this id and stores the
	// result with mut's events, atomically.
	UpdateMerge(ctx context.Context, id int64, mut MergeMutation) (MergeEntry, []event.Event, error)
	// GetMerge returns one entry, ErrNotFound when none.
	GetMerge(ctx context.Context, id int64) (MergeEntry, error)
	// ListMerges returns entries matching q, oldest (lowest ID) first.
	ListMerges(ctx context.Context, q MergeQuery) ([]MergeEntry, error)
}

// Admin is the store's upkeep: its summary and its lifecycle.
type Admin interface {
	// Counts summarizes the store.
	Counts(ctx context.Context) (Counts, error)
	// Flush returns once everything queued for the writer before the call is
	// committed.
	Flush(ctx context.Context) error
	// Close flushes queued writes and releases the store. It is idempotent.
	Close() error
}

// CycleError is returned when a dependency would close a cycle.
type CycleError struct {
	Path []task.ID
}

func (e *CycleError) Error() string {
	parts := make([]string, len(e.Path))
	for i, id := range e.Path {
		parts[i] = string(id)
	}
	return "dependency would close a cycle: " + strings.Join(parts, " → ")
}
