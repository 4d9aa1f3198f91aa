package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestGoldenViews(t *testing.T) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"160x48", 160, 48}} {
		t.Run(size.name, func(t *testing.T) {
			m := newModel(t, sample(), size.w, size.h)
			checkFits(t, m, size.w, size.h)
			golden(t, "fleet-"+size.name, screenText(m))
			press(t, m, "enter") // the top task: its merge parked, and it has the highest priority
			if m.task == nil || m.task.id != "t-park" {
				t.Fatalf("enter opened %v, want t-park (the first that needs the user)", m.task)
			}
			press(t, m, "esc")
			press(t, m, "/")
			typeText(t, m, "t-run1")
			press(t, m, "enter", "enter")
			checkFits(t, m, size.w, size.h)
			golden(t, "task-"+size.name, screenText(m))
			press(t, m, "d")
			golden(t, "diff-"+size.name, screenText(m))
			press(t, m, "esc", "?")
			checkFits(t, m, size.w, size.h)
			golden(t, "help-"+size.name, screenText(m))
		})
	}
}

// TestAttentionFirst: the tasks that need the user come first, each with
// its reason; the rest follow by priority and age; finished tasks show
// only with `a`.
func TestAttentionFirst(t *testing.T) {
	m := newModel(t, sample(), 160, 48)
	var ids []task.ID
	for _, r := range m.fleet.Visible(m.all, m.filter, m.now()) {
		ids = append(ids, r.Sum.ID)
	}
	want := []task.ID{"t-park", "t-wait", "t-paus", "t-fail", "t-run1", "t-que1"}
	if strings.Join(idStrings(ids), ",") != strings.Join(idStrings(want), ",") {
		t.Errorf("order %v, want %v", ids, want)
	}
	s := screenText(m)
	for _, reason := range []string{"asks: Which colour should the banner be?", "paused by the Watcher: stuck: the same edit three times", "failed: the model refused", "merge parked: the gate failed", "bash 12s", "↓3"} {
		if !strings.Contains(s, reason) {
			t.Errorf("the fleet view lacks %q:\n%s", reason, s)
		}
	}
	if strings.Contains(s, "t-done") {
		t.Errorf("a finished task shows without a:\n%s", s)
	}
	press(t, m, "a")
	if !strings.Contains(screenText(m), "t-done") {
		t.Errorf("a does not show the finished task:\n%s", screenText(m))
	}
	// The stream changes the picture: the waiting task is answered and
	// runs, so it leaves the top.
	drive(t, m, m.applyEvents(EventsMsg{ev("t-wait", 0, event.TaskStatus{From: task.Waiting, To: task.Running})}))
	if r := m.fleet.Rows["t-wait"]; r.Attention != "" {
		t.Errorf("a running task still needs attention: %q", r.Attention)
	}
}

func idStrings(ids []task.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// TestUntrustedTextEscaped: a task's text cannot drive the terminal.
func TestUntrustedTextEscaped(t *testing.T) {
	m := newModel(t, sample(), 160, 48)
	press(t, m, "a")
	s := m.Render()
	if strings.Contains(s, "\x1b[31mred") {
		t.Fatalf("the description's escape sequence reached the screen: %q", s)
	}
	if !strings.Contains(s, `\x1b[31mred`) {
		t.Errorf("the escaped description is missing:\n%s", screenText(m))
	}
}

func TestFilter(t *testing.T) {
	m := newModel(t, sample(), 80, 24)
	press(t, m, "/")
	typeText(t, m, "banner")
	if got := len(m.fleet.Visible(m.all, m.filter, m.now())); got != 1 {
		t.Fatalf("filter banner shows %d tasks, want 1", got)
	}
	press(t, m, "enter")
	if !strings.Contains(screenText(m), "filter: banner") {
		t.Errorf("the title does not say the filter:\n%s", screenText(m))
	}
	press(t, m, "esc")
	if got := len(m.fleet.Visible(m.all, m.filter, m.now())); got != 6 {
		t.Errorf("esc leaves %d tasks, want all 6", got)
	}
}

// TestActions: each key asks the backend for its action on the selected
// task, after a confirmation where it changes the task.
func TestActions(t *testing.T) {
	b := sample()
	m := newModel(t, b, 80, 24)
	// The top task waits for an answer: answer it.
	press(t, m, "down") // t-wait
	press(t, m, "s")
	typeText(t, m, "make it blue")
	press(t, m, "enter")
	// Pause the next, confirmed; cancel one, but say no.
	press(t, m, "down", "p", "y")
	press(t, m, "x", "n")
	// From the task view: urgent send, nudge, escalate, rebase, merge.
	press(t, m, "enter", "S")
	typeText(t, m, "stop")
	press(t, m, "enter", "n")
	typeText(t, m, "try again")
	press(t, m, "enter", "e", "y", "b", "y", "M", "y", "R", "y", "r", "y")
	want := []Action{
		{Kind: ActSend, TaskID: "t-wait", Text: "make it blue"},
		{Kind: ActPause, TaskID: "t-paus"},
		{Kind: ActSendUrgent, TaskID: "t-paus", Text: "stop"},
		{Kind: ActNudge, TaskID: "t-paus", Text: "try again"},
		{Kind: ActEscalate, TaskID: "t-paus"},
		{Kind: ActRebase, TaskID: "t-paus"},
		{Kind: ActMergeEnqueue, TaskID: "t-paus"},
		{Kind: ActMergeRetry, TaskID: "t-paus"},
		{Kind: ActResume, TaskID: "t-paus"},
	}
	if len(b.did) != len(want) {
		t.Fatalf("actions %+v, want %+v", b.did, want)
	}
	for i := range want {
		if b.did[i] != want[i] {
			t.Errorf("action %d is %+v, want %+v", i, b.did[i], want[i])
		}
	}
	if !strings.Contains(screenText(m), "resume t-paus done") {
		t.Errorf("the result is not shown:\n%s", screenText(m))
	}
	// An error is shown, not swallowed; an empty message is not sent.
	b.failDo = errors.New("the task is finished")
	press(t, m, "p", "y")
	if !strings.Contains(screenText(m), "failed: the task is finished") {
		t.Errorf("the failure is not shown:\n%s", screenText(m))
	}
	press(t, m, "s", "enter")
	if !strings.Contains(screenText(m), "nothing sent") {
		t.Errorf("an empty message was not refused:\n%s", screenText(m))
	}
}

func TestOpenWorktree(t *testing.T) {
	m := newModel(t, sample(), 80, 24)
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
	msg := cmd()
	r, ok := msg.(runIn)
	if !ok || r.dir != "/work/repo/.neuraphage/t-park" || r.prog != "true" || r.shell {
		t.Fatalf("o gave %#v, want the editor in t-park's worktree", msg)
	}
	if p := newProc(r); strings.Join(p.argv, " ") != "true ." {
		t.Errorf("the editor runs as %q", p.argv)
	}
	p := newProc(runIn{dir: t.TempDir(), prog: "true", shell: true})
	if err := p.Run(); err != nil {
		t.Errorf("running true: %v", err)
	}
	if err := newProc(runIn{dir: t.TempDir(), prog: "false", shell: true}).Run(); err == nil {
		t.Error("false ran without an error")
	}
}

func TestMergeAndKnowledgeViews(t *testing.T) {
	m := newModel(t, sample(), 80, 24)
	press(t, m, "m")
	if s := screenText(m); !strings.Contains(s, "#7") || !strings.Contains(s, "parked") || !strings.Contains(s, "the gate failed: go test") {
		t.Errorf("the merge view:\n%s", s)
	}
	press(t, m, "esc", "L")
	if s := screenText(m); !strings.Contains(s, "2 learnings") {
		t.Errorf("the knowledge view:\n%s", s)
	}
	press(t, m, "/")
	typeText(t, m, "race")
	press(t, m, "enter")
	if s := screenText(m); !strings.Contains(s, "1 learnings matching race") || !strings.Contains(s, "tests need -race") {
		t.Errorf("the knowledge search:\n%s", s)
	}
	checkFits(t, m, 80, 24)
}

// TestResize: every view fits the terminal after it changes size.
func TestResize(t *testing.T) {
	m := newModel(t, sample(), 160, 48)
	for _, sz := range [][2]int{{80, 24}, {40, 10}, {200, 60}, {80, 24}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFits(t, m, sz[0], sz[1])
		press(t, m, "enter")
		checkFits(t, m, sz[0], sz[1])
		press(t, m, "esc", "?")
		checkFits(t, m, sz[0], sz[1])
		press(t, m, "esc")
	}
}

// TestTaskViewFollowsStream: the open task's conversation grows with the
// stream, and its live events are kept when its history arrives after.
func TestTaskViewFollowsStream(t *testing.T) {
	m := newModel(t, sample(), 80, 24)
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	m.applyEvents(EventsMsg{ev("t-park", 0, event.Text{Turn: 3, Text: "landing now"})})
	drive(t, m, cmd)
	m.applyEvents(EventsMsg{ev("t-park", -time.Second, event.ToolCall{Turn: 3, Name: "grep"})})
	s := screenText(m)
	if !strings.Contains(s, "landing now") || !strings.Contains(s, "→ grep") {
		t.Errorf("the task view misses live events:\n%s", s)
	}
	if !strings.Contains(s, "merge:   #7    t-park   parked") {
		t.Errorf("the task view does not show its merge state:\n%s", s)
	}
}
