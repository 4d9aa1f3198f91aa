package mainwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TellRebase tells one task now to bring its branch up to date with main,
// whatever its state: the merge queue calls it for a task whose entry
// conflicts with main once a smaller change of the same files, ordered
// before it, landed (merge.Options.Yield). The task gets the watcher's
// notice (where its branch stands, main's new commits, the forecast, the
// command) after reason, at helpful urgency (blocking when that is the
// configured urgency), with its rebase.required event; the watcher
// remembers it told the task of this commit, so its next pass does not
// tell it again. It fails when the task's branch is not compared with
// main (no active worktree) or is not behind it.
func (w *Monitor) TellRebase(ctx context.Context, id task.ID, reason string) error {
	w.scanMu.Lock()
	defer w.scanMu.Unlock()
	w.loadHistory(ctx)
	groups, err := w.groups(ctx)
	if err != nil {
		return err
	}
	for k, es := range groups {
		i := slices.IndexFunc(es, func(e entry) bool { return e.w.TaskID == id })
		if i < 0 {
			continue
		}
		w.readFiles(ctx, groups)
		e := es[i]
		states := w.checkGroup(ctx, k, []entry{e}, look, true)
		if len(states) != 1 {
			return fmt.Errorf("task %s: its branch could not be compared with %s", id, k.branch)
		}
		ts := states[0]
		switch {
		case ts.State == StateError:
			return errors.New(ts.Note)
		case ts.Behind == 0:
			return fmt.Errorf("task %s: its branch is not behind %s", id, ts.Main)
		}
		urg := Helpful
		if w.cfg.Urgency == Blocking {
			urg = Blocking
		}
		inj, req := w.notice(notice{e: e, st: ts}, false)
		inj.Urgency, inj.Urgent, inj.Quiet, req.Urgency, req.Unrelated = urg, urg == Blocking, urg != Blocking, string(urg), false
		inj.Text = reason + "\n\n" + noticeText(ts, urg, false)
		inj.Attrs["reason"] = "merge_order"
		w.emit(ctx, id, req)
		if err := w.inject(ctx, inj); err != nil {
			return err
		}
		w.record(ts, notify)
		w.mu.Lock()
		w.told(id, ts.MainCommit, urg, w.now().UTC())
		w.mu.Unlock()
		return nil
	}
	return fmt.Errorf("task %s has no worktree the main watcher compares with main", id)
}
