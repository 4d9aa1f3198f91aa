package tui

import (
	"context"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Backend is what the TUI asks of the daemon: reads for its views, one live
// event stream, and the actions it offers. ClientBackend is the daemon's
// API; tests may put a recorder in front of it.
type Backend interface {
	// Fleet lists the unfinished and the failed tasks, or every task
	// with all set.
	Fleet(ctx context.Context, all bool) ([]task.Summary, error)
	Health(ctx context.Context) ([]api.TaskHealth, error)
	Rebase(ctx context.Context) (api.RebaseStatus, error)
	Merge(ctx context.Context) (api.MergeStatus, error)
	Knowledge(ctx context.Context, search string) ([]api.Learning, error)
	Detail(ctx context.Context, id task.ID) (api.TaskDetail, error)
	Events(ctx context.Context, q event.Query) ([]event.Event, error)
	Worktree(ctx context.Context, id task.ID) (api.Worktree, error)
	// Overlap is the overlap radar's pairs of one running task.
	Overlap(ctx context.Context, id task.ID) ([]api.OverlapPair, error)
	// Diff is the task's worktree against its base commit.
	Diff(ctx context.Context, wt api.Worktree) (string, error)
	// Watch opens the live stream of every event.
	Watch(ctx context.Context) (Stream, error)
	// Do applies an action to a task and says what happened.
	Do(ctx context.Context, a Action) (string, error)
}

// Stream is a live event stream (client.Stream).
type Stream interface {
	Next() (event.Event, error)
	Close() error
}

// ActionKind names what an action does.
type ActionKind string

// The actions the TUI offers.
const (
	ActSend         ActionKind = "send"
	ActSendUrgent   ActionKind = "send-urgent"
	ActNudge        ActionKind = "nudge"
	ActPause        ActionKind = "pause"
	ActResume       ActionKind = "resume"
	ActCancel       ActionKind = "cancel"
	ActEscalate     ActionKind = "escalate"
	ActRebase       ActionKind = "rebase"
	ActMergeEnqueue ActionKind = "merge-enqueue"
	ActMergeRetry   ActionKind = "merge-retry"
)

// Action is one change asked of a task.
type Action struct {
	Kind   ActionKind
	TaskID task.ID
	// Text is the message for send and nudge.
	Text string
}

// ClientBackend is Backend over the daemon's API.
type ClientBackend struct{ C *client.Client }

const reason = "from the terminal dashboard"

func (b ClientBackend) Fleet(ctx context.Context, all bool) ([]task.Summary, error) {
	if all {
		return b.C.ListTasks(ctx, nil, true)
	}
	// Failed tasks need the user too; the fleet shows recent ones.
	return b.C.ListTasks(ctx, []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging, task.Failed}, false)
}
func (b ClientBackend) Health(ctx context.Context) ([]api.TaskHealth, error) {
	return b.C.SupervisionHealth(ctx, "")
}
func (b ClientBackend) Rebase(ctx context.Context) (api.RebaseStatus, error) {
	return b.C.RebaseStatus(ctx)
}
func (b ClientBackend) Merge(ctx context.Context) (api.MergeStatus, error) {
	return b.C.MergeStatus(ctx, 20)
}
func (b ClientBackend) Knowledge(ctx context.Context, search string) ([]api.Learning, error) {
	return b.C.Learnings(ctx, search, "", 200)
}
func (b ClientBackend) Detail(ctx context.Context, id task.ID) (api.TaskDetail, error) {
	return b.C.GetTask(ctx, string(id))
}
func (b ClientBackend) Events(ctx context.Context, q event.Query) ([]event.Event, error) {
	return b.C.Events(ctx, q)
}
func (b ClientBackend) Worktree(ctx context.Context, id task.ID) (api.Worktree, error) {
	return b.C.Worktree(ctx, string(id))
}
func (b ClientBackend) Overlap(ctx context.Context, id task.ID) ([]api.OverlapPair, error) {
	return b.C.Overlap(ctx, string(id))
}

// Diff runs git diff in the worktree, read-only: the TUI runs on the
// daemon's machine and the worktree is the user's files.
func (b ClientBackend) Diff(ctx context.Context, wt api.Worktree) (string, error) {
	if wt.Path == "" || wt.BaseCommit == "" {
		return "", fmt.Errorf("the task has no worktree (state %s)", wt.State)
	}
	return git.Run(ctx, wt.Path, "diff", "--stat", "--patch", wt.BaseCommit)
}

func (b ClientBackend) Watch(ctx context.Context) (Stream, error) {
	return b.C.Watch(ctx, event.Query{AfterID: -1})
}

func (b ClientBackend) Do(ctx context.Context, a Action) (string, error) {
	ref := string(a.TaskID)
	switch a.Kind {
	case ActSend, ActSendUrgent:
		m, err := b.C.SendMessage(ctx, ref, api.SendRequest{Text: a.Text, Urgent: a.Kind == ActSendUrgent})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("message #%d queued for %s", m.ID, ref), nil
	case ActNudge:
		m, err := b.C.Nudge(ctx, ref, a.Text)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("nudge #%d queued for %s", m.ID, ref), nil
	case ActPause, ActResume, ActCancel:
		t, err := b.C.Act(ctx, ref, client.Action(a.Kind), reason)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s: now %s", a.Kind, ref, t.Status), nil
	case ActEscalate:
		e, err := b.C.Escalate(ctx, ref, "", reason)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("escalated %s: %s → %s", ref, e.From, e.To), nil
	case ActRebase:
		if _, err := b.C.RebaseTask(ctx, ref); err != nil {
			return "", err
		}
		return "rebase asked of " + ref, nil
	case ActMergeEnqueue:
		e, err := b.C.MergeEnqueue(ctx, ref)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s in the merge queue as #%d (%s)", ref, e.ID, e.State), nil
	case ActMergeRetry:
		e, err := b.C.MergeRetry(ctx, ref)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("merge of %s retried as #%d (%s)", ref, e.ID, e.State), nil
	}
	return "", fmt.Errorf("unknown action %q", a.Kind)
}
