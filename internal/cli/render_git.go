package cli

import (
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// describeGit renders a worktree, commit or merge observation as one line.
func describeGit(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.WorktreeCreated:
		s := fmt.Sprintf("worktree %s on %s from %s@%s (%d ms)", p.Path, p.Branch, p.Base, shortSHA(p.BaseCommit), p.DurationMs)
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
		return s, true
	case event.WorktreeStray:
		return fmt.Sprintf("stray worktree %s (%s) left alone", p.Path, p.Branch), true
	case event.CommitMade:
		return fmt.Sprintf("committed %d file(s) on %s as %s: %s", p.Files, p.Branch, shortSHA(p.Commit), truncate(p.Message, 60)), true
	case event.MergeQueued:
		return fmt.Sprintf("merge #%d queued: %s → %s (%d ahead)", p.Entry, p.Branch, p.Target, p.Ahead), true
	case event.MergeStarted:
		return fmt.Sprintf("merge #%d started onto %s@%s (attempt %d)", p.Entry, p.Target, shortSHA(p.TargetCommit), p.Attempt), true
	case event.MergeLanded:
		return fmt.Sprintf("merge #%d landed on %s as %s (%s, %d ms)", p.Entry, p.Target, shortSHA(p.Commit), p.Strategy, p.DurationMs), true
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
	case event.PROpened:
		return fmt.Sprintf("merge #%d opened a pull request: %s", p.Entry, p.URL), true
	}
	return "", false
}
