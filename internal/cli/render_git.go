package cli

import (
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// describeGit renders a worktree, commit, merge or rebase observation as one
// line.
func describeGit(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.WorktreeCreated:
		s := fmt.Sprintf("worktree %s on %s from %s@%s (%d ms)", p.Path, p.Branch, p.Base, words.ShortCommit(p.BaseCommit), p.DurationMs)
		if p.Port != 0 {
			s += fmt.Sprintf(", port %d", p.Port)
		}
		return s, true
	case event.WorktreeRecreated:
		return fmt.Sprintf("worktree %s made again from %s: %s", p.Path, p.From, p.Reason), true
	case event.WorktreeRemoved:
		s := fmt.Sprintf("worktree %s removed: %s", p.Path, p.Reason)
		if p.Archive != "" {
			s += "; tip kept as " + p.Archive
		}
		if len(p.Kept) > 0 {
			s += fmt.Sprintf("; %d ignored file(s) kept in %s: %s", len(p.Kept), p.KeptIn, truncate(strings.Join(p.Kept, ", "), 120))
		}
		return s, true
	case event.WorktreeStray:
		return fmt.Sprintf("stray worktree %s (%s) left alone", p.Path, p.Branch), true
	case event.WorktreeRemade:
		s := fmt.Sprintf("worktree %s left half made by a killed daemon; made again", p.Path)
		if len(p.Kept) > 0 {
			s += fmt.Sprintf("; %d file(s) not from the checkout kept in %s: %s", len(p.Kept), p.KeptIn, truncate(strings.Join(p.Kept, ", "), 120))
		}
		return s, true
	case event.GitStaleLock:
		if p.Removed {
			return fmt.Sprintf("stale git lock %s removed: %s", p.Lock, p.Reason), true
		}
		return fmt.Sprintf("git lock %s left in place: %s", p.Lock, p.Reason), true
	case event.CommitMade:
		return fmt.Sprintf("committed %d file(s) on %s as %s: %s", p.Files, p.Branch, words.ShortCommit(p.Commit), truncate(p.Message, 60)), true
	case event.MergeQueued:
		return fmt.Sprintf("merge #%d queued: %s → %s (%d ahead)", p.Entry, p.Branch, p.Target, p.Ahead), true
	case event.MergeStarted:
		return fmt.Sprintf("merge #%d started onto %s@%s (attempt %d)", p.Entry, p.Target, words.ShortCommit(p.TargetCommit), p.Attempt), true
	case event.MergeLanded:
		return fmt.Sprintf("merge #%d landed on %s as %s (%s, %d ms)", p.Entry, p.Target, words.ShortCommit(p.Commit), p.Strategy, p.DurationMs), true
	case event.MergeConflicted:
		what := "parked"
		if p.SentBack {
			what = "sent back to the task"
		}
		return fmt.Sprintf("merge #%d conflicts with %s in %s; %s", p.Entry, p.Target, strings.Join(p.Files, ", "), what), true
	case event.MergeGateFailed:
		what := "parked"
		if p.SentBack {
			what = "sent back to the task"
		}
		return fmt.Sprintf("merge #%d gate `%s` failed (exit %d); %s", p.Entry, p.Command, p.ExitCode, what), true
	case event.MergeWaiting:
		return fmt.Sprintf("merge #%d waits: %s", p.Entry, p.Reason), true
	case event.MergeParked:
		return fmt.Sprintf("merge #%d parked: %s", p.Entry, p.Reason), true
	case event.MergeCancelled:
		return fmt.Sprintf("merge #%d cancelled: %s", p.Entry, p.Reason), true
	case event.MergeRolledBack:
		return fmt.Sprintf("merge #%d: the %s interrupted by a restart was rolled back (branch at %s); starting over", p.Entry, p.Step, words.ShortCommit(p.Tip)), true
	case event.PROpened:
		return fmt.Sprintf("merge #%d opened a pull request: %s", p.Entry, p.URL), true
	case event.MainUpdated:
		return mainUpdated(p), true
	case event.RebaseRequired:
		return rebaseRequired(p), true
	case event.RebaseCompleted:
		if p.UpToDate {
			return fmt.Sprintf("rebase onto %s: already up to date", dash(p.Main)), true
		}
		return fmt.Sprintf("rebased onto %s: %s → %s (%s)", dash(p.Main), words.ShortCommit(p.PreviousHead), words.ShortCommit(p.NewHead), millis(p.DurationMs)), true
	case event.RebaseConflict:
		return rebaseConflict(p), true
	}
	return "", false
}

// mainUpdated: "main moved to 0123456789 in /src/app (3 tasks behind)".
func mainUpdated(p event.MainUpdated) string {
	verb := "moved to"
	if p.Previous == "" {
		verb = "is at"
	}
	s := fmt.Sprintf("%s %s %s", dash(p.Branch), verb, words.ShortCommit(p.NewCommit))
	if p.Repo != "" {
		s += " in " + p.Repo
	}
	s += fmt.Sprintf(" (%d task%s behind)", p.Behind, plural(p.Behind))
	if p.Rewritten {
		s += " — rewritten (force-push)"
	}
	return s
}

// rebaseRequired: "told to rebase (helpful): 2 commits behind main;
// forecast: conflict in a.go"; an fyi note to a task main did not touch,
// which asks for no rebase: "main moved (fyi, no overlap with this task):
// 2 commits behind main".
func rebaseRequired(p event.RebaseRequired) string {
	if p.Unrelated {
		return fmt.Sprintf("%s moved (fyi, no overlap with this task): %d commit%s behind", dash(p.Main), p.CommitsBehind, plural(p.CommitsBehind))
	}
	how := dash(p.Urgency)
	if p.Manual {
		how += ", requested by user"
	}
	s := fmt.Sprintf("told to rebase (%s): %d commit%s behind %s; forecast: ", how, p.CommitsBehind, plural(p.CommitsBehind), dash(p.Main))
	switch {
	case len(p.Conflicts) > 0:
		s += "conflict in " + truncate(strings.Join(p.Conflicts, ", "), 60)
	case len(p.Overlap) > 0:
		s += "overlap in " + truncate(strings.Join(p.Overlap, ", "), 60)
	default:
		s += "clean"
	}
	return s
}

// rebaseConflict: "rebase onto main stopped: conflicts in a.go, b.go;
// nothing changed (predicted)", or the details when there are no files (the
// rebase could not be tried).
func rebaseConflict(p event.RebaseConflict) string {
	s := fmt.Sprintf("rebase onto %s stopped: ", dash(p.Main))
	switch {
	case len(p.Files) == 0 && p.Details != "":
		s += truncate(p.Details, 80)
	default:
		s += "conflicts"
		if len(p.Files) > 0 {
			s += " in " + truncate(strings.Join(p.Files, ", "), 60)
		}
		if p.Predicted {
			s += "; nothing changed (predicted)"
		} else {
			s += "; undone, nothing changed"
		}
	}
	if p.Paused {
		s += "; task paused"
	}
	return s
}
