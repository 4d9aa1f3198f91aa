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

// TestTaskViewShowsOverlaps: a running task's view shows its row of the
// overlap matrix (the other task, the forecast, the files), read again when
// an overlap event names it, also one logged on the other task; a task not
// running is not asked about.
func TestTaskViewShowsOverlaps(t *testing.T) {
	fb := sample()
	m := newModel(t, fb, 160, 48)
	press(t, m, "/")
	typeText(t, m, "t-run1")
	press(t, m, "enter", "enter")
	if m.task == nil || m.task.id != "t-run1" {
		t.Fatalf("the open task is %v, want t-run1", m.task)
	}
	s := screenText(m)
	for _, want := range []string{"overlaps: 1 running task(s) changed files this one changed", "⇄ t-que1", "conflict in greeting.txt", "files: greeting.txt, README.md · lines intersect in greeting.txt"} {
		if !strings.Contains(s, want) {
			t.Errorf("the task view lacks %q:\n%s", want, s)
		}
	}
	fb.mu.Lock()
	fb.overlap["t-run1"] = append(fb.overlap["t-run1"], api.OverlapPair{A: "t-run1", B: "t-wait", Files: []string{"banner.css"}, Forecast: "clean"})
	fb.mu.Unlock()
	// t-wait's change made the new pair: the event is t-wait's.
	drive(t, m, m.applyEvents(EventsMsg{ev("t-wait", 0, event.OverlapFound{Other: "t-run1", Files: []string{"banner.css"}})}))
	s = screenText(m)
	if !strings.Contains(s, "overlaps: 2 running task(s)") || !strings.Contains(s, "⇄ t-wait") || !strings.Contains(s, "files: banner.css") {
		t.Errorf("the task view did not follow the new overlap:\n%s", s)
	}
	// Another pair's event leaves it alone.
	fb.mu.Lock()
	fb.overlap["t-run1"] = nil
	fb.mu.Unlock()
	drive(t, m, m.applyEvents(EventsMsg{ev("t-wait", 0, event.OverlapFound{Other: "t-que1", Files: []string{"x"}})}))
	if s := screenText(m); !strings.Contains(s, "⇄ t-wait") {
		t.Errorf("an unrelated overlap event changed the header:\n%s", s)
	}
	drive(t, m, m.openTask("t-park")) // merging
	if m.task == nil || m.task.id != "t-park" {
		t.Fatalf("the open task is %v, want t-park", m.task)
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.asked["t-park"] != 0 {
		t.Errorf("the radar was asked about a merging task %d times", fb.asked["t-park"])
	}
}
