package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Report is seed 003's summary of a task: its status and how long it
// ran, its pull request, each file it changed with its +/− counts from
// git, its summary, and where its logs are.
type Report struct {
	ID          task.ID
	Description string
	Status      task.Status
	// Reason is the status's reason (a failure's, a pause's).
	Reason string
	// Duration is from its first start to its finish (or to now).
	Duration time.Duration
	// PR is the pull request's URL, when one was opened.
	PR string
	// Landed is the commit its work landed as; Base the branch.
	Landed, Base, Branch string
	// Files are the changes, by path; Range the commits they were
	// counted between, Note why there are none to count.
	Files []FileChange
	Range string
	Note  string
	// Summary is the agent's own, as it completed (or the reason).
	Summary string
	// Logs says where to read more.
	Logs []string
}

// FileChange is one changed file: lines added and deleted (none for a
// binary file).
type FileChange struct {
	Path    string
	Added   int
	Deleted int
	Binary  bool
}

// ReportStore is what Reporter reads of the store.
type ReportStore interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	GetWorktree(ctx context.Context, id task.ID) (store.Worktree, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
}

// Reporter builds reports from the store and the task's repository.
type Reporter struct {
	Store ReportStore
	// LogDir is the daemon's log directory.
	LogDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Report builds task id's report. The changes are read from git: a live
// branch against the merge base with its base branch (with what its work
// tree holds uncommitted, while the task is not finished); a squash or merge
// landing as the landing commit against its first parent; a fast-forward
// landing from the commit the task started from. A repository or branch
// gone leaves no files and a note, not an error.
func (r Reporter) Report(ctx context.Context, id task.ID) (Report, error) {
	t, err := r.Store.GetTask(ctx, id)
	if err != nil {
		return Report{}, err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	rep := Report{ID: t.ID, Description: t.Description, Status: t.Status, Reason: t.CloseReason}
	if t.StartedAt != nil {
		end := now()
		if t.FinishedAt != nil {
			end = *t.FinishedAt
		}
		rep.Duration = end.Sub(*t.StartedAt).Round(time.Second)
	}
	evs, err := r.Store.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: id,
		Kinds: []string{string(event.KindPROpened), string(event.KindCompleted)}}})
	if err != nil {
		return Report{}, fmt.Errorf("reading task %s's events: %w", id, err)
	}
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case event.PROpened:
			rep.PR = p.URL
		case event.Completed:
			rep.Summary = p.Summary
		}
	}
	if rep.Summary == "" && t.Status != task.Running && t.Status != task.Queued {
		rep.Summary = t.CloseReason
	}
	rep.Logs = []string{
		"neuraphage task log " + string(id) + "   (the conversation)",
		"neuraphage events --task " + string(id) + "   (every event)",
	}
	if r.LogDir != "" {
		rep.Logs = append(rep.Logs, r.LogDir+"   (the daemon's log)")
	}
	w, err := r.Store.GetWorktree(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rep.Note = "the task has no worktree: it changed no files of its own"
		return rep, nil
	case err != nil:
		return Report{}, fmt.Errorf("reading task %s's worktree: %w", id, err)
	}
	rep.Base, rep.Branch, rep.Landed = w.Base, w.Branch, w.Landed
	from, to, err := changeRange(ctx, w)
	if err != nil {
		rep.Note = "its changes cannot be counted: " + err.Error()
		return rep, nil
	}
	rep.Range = from + ".." + to
	if tree := liveTree(ctx, t, w); tree != "" {
		// A task still at work: what its work tree holds now, committed
		// or not.
		to, rep.Range = tree, from+"..(its work tree)"
	}
	if rep.Files, err = numstat(ctx, w.Repo, from, to); err != nil {
		rep.Note = "its changes cannot be counted: " + err.Error()
	}
	return rep, nil
}

// liveTree photographs the work tree of a task not yet finished whose
// worktree is there (git.WorkTreeTree: the real index and the files are
// not touched), so that its report counts uncommitted work too; "" when
// there is none to take.
func liveTree(ctx context.Context, t task.Task, w store.Worktree) string {
	if t.Status.Terminal() || w.Landed != "" || w.Path == "" {
		return ""
	}
	if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
		return ""
	}
	tree, err := git.WorkTreeTree(ctx, w.Path)
	if err != nil {
		return ""
	}
	return tree
}

// changeRange finds the commits the task's changes lie between.
func changeRange(ctx context.Context, w store.Worktree) (from, to string, err error) {
	if w.Landed != "" {
		if w.Landed != w.LandedTip {
			// A squash or a merge commit: the landing itself.
			parent, err := git.RevParse(ctx, w.Repo, w.Landed+"^1")
			if err != nil {
				return "", "", err
			}
			return parent, w.Landed, nil
		}
		if w.BaseCommit == "" {
			return "", "", errors.New("the commit it started from is not recorded")
		}
		return w.BaseCommit, w.LandedTip, nil
	}
	tip := ""
	for _, ref := range []string{"refs/heads/" + w.Branch, w.Archive} {
		if ref == "" || ref == "refs/heads/" {
			continue
		}
		if tip, err = git.RevParse(ctx, w.Repo, ref); err == nil {
			break
		}
	}
	if tip == "" {
		return "", "", fmt.Errorf("its branch %s is gone", w.Branch)
	}
	base := w.BaseCommit
	if w.Base != "" {
		if mb, err := git.Run(ctx, w.Repo, "merge-base", "refs/heads/"+w.Base, tip); err == nil {
			base = strings.TrimSpace(mb)
		}
	}
	if base == "" {
		return "", "", errors.New("its base is unknown")
	}
	return base, tip, nil
}

// numstat counts the changes between two commits, renames followed.
func numstat(ctx context.Context, repo, from, to string) ([]FileChange, error) {
	out, err := git.Run(ctx, repo, "diff", "--numstat", "-z", "-M", from, to, "--")
	if err != nil {
		return nil, err
	}
	return ParseNumstat(out)
}

// ParseNumstat reads `git diff --numstat -z`: "ADDED\tDELETED\tPATH\0"
// per file, or "ADDED\tDELETED\t\0OLD\0NEW\0" for a rename ("-" counts
// for a binary file). A rename is reported under its new path as
// "old => new".
func ParseNumstat(out string) ([]FileChange, error) {
	var files []FileChange
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if rec == "" {
			continue
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("reading git's numstat: unexpected record %q", rec)
		}
		f := FileChange{Path: parts[2]}
		if parts[2] == "" { // a rename: old and new follow
			if i+2 >= len(fields) {
				return nil, fmt.Errorf("reading git's numstat: a rename without its paths")
			}
			f.Path = fields[i+1] + " => " + fields[i+2]
			i += 2
		}
		if parts[0] == "-" && parts[1] == "-" {
			f.Binary = true
		} else {
			a, err1 := strconv.Atoi(parts[0])
			d, err2 := strconv.Atoi(parts[1])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("reading git's numstat: unexpected counts in %q", rec)
			}
			f.Added, f.Deleted = a, d
		}
		files = append(files, f)
	}
	return files, nil
}
