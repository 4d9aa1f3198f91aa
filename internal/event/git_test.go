package event

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every git kind decodes back to its own typed payload.
func TestGitEventsRoundTrip(t *testing.T) {
	t.Parallel()
	payloads := []Payload{
		WorktreeCreated{Repo: "/r", Path: "/w", Branch: "neuraphage/t-aaaaa", Base: "main", BaseCommit: "abc", Port: 4100, DurationMs: 3},
		WorktreeRecreated{Path: "/w", Branch: "b", From: "refs/heads/b", Reason: "missing"},
		WorktreeRemoved{Path: "/w", Branch: "b", Archive: "refs/neuraphage/archive/t-aaaaa", BranchDeleted: true, Reason: "merged"},
		WorktreeStray{Repo: "/r", Path: "/x", Branch: "neuraphage/t-bbbbb"},
		WorktreeRemade{Path: "/w", Branch: "b", Kept: []string{"notes.txt"}, KeptIn: "/r/.git/neuraphage/ignored/t-aaaaa"},
		GitStaleLock{Repo: "/r", Lock: "/r/.git/packed-refs.lock", Removed: true, Reason: "no process uses the repository"},
		CommitMade{Branch: "b", Commit: "abc", Files: 2, Message: "m"},
		MergeQueued{Entry: 1, Branch: "b", Target: "main", Ahead: 2},
		MergeStarted{Entry: 1, Target: "main", TargetCommit: "abc", Attempt: 1},
		MergeLanded{Entry: 1, Target: "main", Commit: "def", Strategy: "rebase", DurationMs: 9},
		MergeConflicted{Entry: 1, Target: "main", Files: []string{"a.go"}, SentBack: true},
		MergeGateFailed{Entry: 1, Command: "make test", ExitCode: 2, Output: "FAIL", SentBack: false},
		MergeWaiting{Entry: 1, Reason: "dirty"},
		MergeParked{Entry: 1, Reason: "conflict"},
		MergeCancelled{Entry: 1, Reason: "user"},
		MergeRolledBack{Entry: 1, Step: "rebase", Tip: "abc"},
		PROpened{Entry: 1, Branch: "b", Target: "main", URL: "https://example.invalid/pr/1"},
		MainUpdated{Repo: "/r", Branch: "main", Previous: "abc", NewCommit: "def", Rewritten: true, Behind: 3},
		RebaseRequired{Main: "main", MainCommit: "def", CommitsBehind: 2, NewCommits: []string{"def1234 feat: x"}, Urgency: "helpful", Conflicts: []string{"a.go"}, Overlap: []string{"a.go", "b.go"}, Manual: true},
		RebaseCompleted{Main: "main", PreviousHead: "abc", NewHead: "def", UpToDate: true, DurationMs: 12},
		RebaseConflict{Main: "main", Files: []string{"a.go"}, Details: "CONFLICT (content)", Predicted: true, Paused: true},
		MergeOrdered{Entry: 2, Target: "main", After: "t-bbbbb", AfterEntry: 3, Files: []string{"a.go"}, Lines: 40, AfterLines: 3},
		MergeYielded{Entry: 2, Target: "main", After: "t-bbbbb", Conflicts: []string{"a.go"}, Notice: "main_watcher"},
	}
	for _, p := range payloads {
		e := New(t0, "t-aaaaa", p)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", p.EventKind(), err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", p.EventKind(), diff)
		}
	}
}
