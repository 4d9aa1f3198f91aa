package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// TestMainUpdatedRefreshesBehind: when main moves, the fleet reads every
// task's distance from main again and the behind column shows it.
func TestMainUpdatedRefreshesBehind(t *testing.T) {
	fb := sample()
	m := newModel(t, fb, 160, 48)
	if s := screenText(m); !strings.Contains(s, "↓3") {
		t.Fatalf("the fleet does not show t-run1 3 behind main:\n%s", s)
	}
	fb.mu.Lock()
	fb.rebase = api.RebaseStatus{Tasks: []api.TaskRebase{{TaskID: "t-run1", Behind: 5}, {TaskID: "t-que1", Behind: 2}}}
	fb.mu.Unlock()
	drive(t, m, m.applyEvents(EventsMsg{
		ev("", 0, event.MainUpdated{Repo: "/work/repo", Branch: "main", NewCommit: "def456", Behind: 2}),
		ev("", 0, event.MainUpdated{Repo: "/work/repo", Branch: "main", NewCommit: "fed789", Behind: 2}),
	}))
	s := screenText(m)
	if strings.Contains(s, "↓3") || !strings.Contains(s, "↓5") || !strings.Contains(s, "↓2") {
		t.Errorf("after main.updated the fleet should show t-run1 ↓5 and t-que1 ↓2:\n%s", s)
	}
}

// TestTaskViewHeaderFollowsStream: a worktree or merge event of the open
// task reads its worktree and merge state again for the header.
func TestTaskViewHeaderFollowsStream(t *testing.T) {
	fb := sample()
	m := newModel(t, fb, 160, 48)
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // t-park, first in the fleet
	drive(t, m, cmd)
	if m.task == nil || m.task.id != "t-park" {
		t.Fatalf("the open task is %v, want t-park", m.task)
	}
	if s := screenText(m); !strings.Contains(s, "merge:   #7    t-park   parked") {
		t.Fatalf("the task view does not show its parked merge:\n%s", s)
	}
	fb.mu.Lock()
	fb.merge = api.MergeStatus{Recent: []api.MergeEntry{{ID: 7, TaskID: "t-park", State: "landed", Target: "main", Attempts: 3}}}
	fb.wtState = "removed"
	fb.mu.Unlock()
	drive(t, m, m.applyEvents(EventsMsg{
		ev("t-park", 0, event.MergeLanded{Entry: 7, Target: "main", Commit: "abc999"}),
		ev("t-park", 0, event.WorktreeRemoved{Path: "/work/repo/.neuraphage/t-park", Branch: "neuraphage/t-park/work", Reason: "landed"}),
	}))
	s := screenText(m)
	if !strings.Contains(s, "merge:   #7    t-park   landed") || !strings.Contains(s, "worktree: removed") {
		t.Errorf("the header should show the landed merge and the removed worktree:\n%s", s)
	}
	// Another task's events leave the header alone.
	fb.mu.Lock()
	fb.wtState = "active"
	fb.mu.Unlock()
	drive(t, m, m.applyEvents(EventsMsg{ev("t-run1", 0, event.WorktreeCreated{Path: "/x", Branch: "b"})}))
	if s := screenText(m); !strings.Contains(s, "worktree: removed") {
		t.Errorf("another task's worktree event changed the header:\n%s", s)
	}
}
