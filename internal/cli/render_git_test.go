package cli

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

func TestDescribeGit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    event.Payload
		want string
	}{
		{"worktree removed, ignored kept", event.WorktreeRemoved{Path: "/wt/t-1", Reason: "pruned (cancelled)", Archive: "refs/neuraphage/archive/t-1",
			Kept: []string{"local.env"}, KeptIn: "/src/app/.git/neuraphage/ignored/t-1"},
			"worktree /wt/t-1 removed: pruned (cancelled); tip kept as refs/neuraphage/archive/t-1; 1 ignored file(s) kept in /src/app/.git/neuraphage/ignored/t-1: local.env"},
		{"merge landed", event.MergeLanded{Entry: 4, Target: "main", Commit: "0123456789abcdef", Strategy: "rebase", DurationMs: 120},
			"merge #4 landed on main as 0123456789 (rebase, 120 ms)"},
		{"main moved", event.MainUpdated{Repo: "/src/app", Branch: "main", Previous: "fedcba9876543210", NewCommit: "0123456789abcdef", Behind: 3},
			"main moved to 0123456789 in /src/app (3 tasks behind)"},
		{"main rewritten", event.MainUpdated{Repo: "/src/app", Branch: "origin/main", Previous: "fedcba9876543210", NewCommit: "0123456789abcdef", Behind: 1, Rewritten: true},
			"origin/main moved to 0123456789 in /src/app (1 task behind) — rewritten (force-push)"},
		{"main first seen", event.MainUpdated{Branch: "main", NewCommit: "0123456789abcdef"},
			"main is at 0123456789 (0 tasks behind)"},
		{"told to rebase, conflict", event.RebaseRequired{Main: "main", MainCommit: "0123456789abcdef", CommitsBehind: 2, NewCommits: []string{"fix parser"},
			Urgency: "helpful", Conflicts: []string{"a.go"}, Overlap: []string{"a.go", "b.go"}},
			"told to rebase (helpful): 2 commits behind main; forecast: conflict in a.go"},
		{"told to rebase, overlap", event.RebaseRequired{Main: "origin/main", CommitsBehind: 1, Urgency: "fyi", Overlap: []string{"a.go", "b.go"}},
			"told to rebase (fyi): 1 commit behind origin/main; forecast: overlap in a.go, b.go"},
		{"main moved, nothing of the task's touched", event.RebaseRequired{Main: "main", CommitsBehind: 2, Urgency: "fyi", Unrelated: true},
			"main moved (fyi, no overlap with this task): 2 commits behind"},
		{"told to rebase by the user", event.RebaseRequired{Main: "main", CommitsBehind: 5, Urgency: "blocking", Manual: true},
			"told to rebase (blocking, requested by user): 5 commits behind main; forecast: clean"},
		{"rebased", event.RebaseCompleted{Main: "main", PreviousHead: "fedcba9876543210", NewHead: "0123456789abcdef", DurationMs: 1500},
			"rebased onto main: fedcba9876 → 0123456789 (1.5s)"},
		{"rebase up to date", event.RebaseCompleted{Main: "main", PreviousHead: "0123456789abcdef", NewHead: "0123456789abcdef", UpToDate: true},
			"rebase onto main: already up to date"},
		{"conflict predicted", event.RebaseConflict{Main: "main", Files: []string{"a.go", "b.go"}, Predicted: true},
			"rebase onto main stopped: conflicts in a.go, b.go; nothing changed (predicted)"},
		{"conflict undone, paused", event.RebaseConflict{Main: "main", Files: []string{"a.go"}, Details: "CONFLICT (content): a.go", Paused: true},
			"rebase onto main stopped: conflicts in a.go; undone, nothing changed; task paused"},
		{"conflict without files", event.RebaseConflict{Main: "main"},
			"rebase onto main stopped: conflicts; undone, nothing changed"},
		{"not rebased", event.RebaseConflict{Main: "main", Details: "not rebased: the worktree has a merge in progress"},
			"rebase onto main stopped: not rebased: the worktree has a merge in progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Through describeEvent, as task log and events render them.
			if got := describeEvent(event.New(t0, "t-4k2x9", tt.p)); got != tt.want {
				t.Errorf("describeEvent(%s) =\n%q; want\n%q", tt.p.EventKind(), got, tt.want)
			}
		})
	}
}
