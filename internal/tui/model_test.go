package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

var update = flag.Bool("update", false, "rewrite the golden views")

var clock = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// fakeBackend serves a fixed fleet and records the actions asked of it.
type fakeBackend struct {
	mu      sync.Mutex
	list    []task.Summary
	health  []api.TaskHealth
	rebase  api.RebaseStatus
	events  map[task.ID][]event.Event
	merge   api.MergeStatus
	learn   []api.Learning
	did     []Action
	failDo  error
	details map[task.ID]api.TaskDetail
	// wtState is every worktree's state; "active" when empty.
	wtState string
	// overlap is the overlap radar's pairs by task; asked counts the reads.
	overlap map[task.ID][]api.OverlapPair
	asked   map[task.ID]int
}

func (f *fakeBackend) Fleet(_ context.Context, all bool) ([]task.Summary, error) {
	var out []task.Summary
	for _, s := range f.list {
		if all || !s.Status.Terminal() || s.Status == task.Failed {
			out = append(out, s)
		}
	}
	return out, nil
}
func (f *fakeBackend) Health(context.Context) ([]api.TaskHealth, error) { return f.health, nil }
func (f *fakeBackend) Rebase(context.Context) (api.RebaseStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rebase, nil
}
func (f *fakeBackend) Merge(context.Context) (api.MergeStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.merge, nil
}
func (f *fakeBackend) Knowledge(_ context.Context, q string) ([]api.Learning, error) {
	var out []api.Learning
	for _, l := range f.learn {
		if strings.Contains(l.Summary, q) {
			out = append(out, l)
		}
	}
	return out, nil
}
func (f *fakeBackend) Detail(_ context.Context, id task.ID) (api.TaskDetail, error) {
	if d, ok := f.details[id]; ok {
		return d, nil
	}
	for _, s := range f.list {
		if s.ID == id {
			return api.TaskDetail{Task: task.Task{ID: s.ID, Description: s.Description, Status: s.Status, Persona: s.Persona, Engine: s.Engine}}, nil
		}
	}
	return api.TaskDetail{}, errors.New("no task " + string(id))
}
func (f *fakeBackend) Events(_ context.Context, q event.Query) ([]event.Event, error) {
	var out []event.Event
	for _, e := range f.events[q.TaskID] {
		if len(q.Kinds) == 0 || slices.Contains(q.Kinds, string(e.Kind)) {
			out = append(out, e)
		}
	}
	return out, nil
}
func (f *fakeBackend) Worktree(_ context.Context, id task.ID) (api.Worktree, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return api.Worktree{TaskID: id, State: or(f.wtState, "active"), Path: "/work/repo/.neuraphage/" + string(id), Branch: "neuraphage/" + string(id) + "/work", BaseCommit: "abc123"}, nil
}
func (f *fakeBackend) Overlap(_ context.Context, id task.ID) ([]api.OverlapPair, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.asked == nil {
		f.asked = map[task.ID]int{}
	}
	f.asked[id]++
	return f.overlap[id], nil
}
func (f *fakeBackend) Diff(context.Context, api.Worktree) (string, error) {
	return "diff --git a/greeting.txt b/greeting.txt\n-Hello.\n+Hello, and welcome!\n", nil
}
func (f *fakeBackend) Watch(context.Context) (Stream, error) { return nil, errors.New("no stream") }
func (f *fakeBackend) Do(_ context.Context, a Action) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failDo != nil {
		return "", f.failDo
	}
	f.did = append(f.did, a)
	return fmt.Sprintf("%s %s done", a.Kind, a.TaskID), nil
}

func sum(id string, st task.Status, desc string, prio int, age time.Duration) task.Summary {
	return task.Summary{ID: task.ID(id), Status: st, Description: desc, Priority: prio, Persona: "junior", Engine: "native",
		CreatedAt: clock.Add(-age), Usage: task.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.042}}
}

func ev(id string, at time.Duration, p event.Payload) event.Event {
	return event.New(clock.Add(-at), task.ID(id), p)
}

// sample is a fleet of six tasks, four of which need the user.
func sample() *fakeBackend {
	return &fakeBackend{
		list: []task.Summary{
			sum("t-run1", task.Running, "make the greeting friendlier", 2, 9*time.Minute),
			sum("t-que1", task.Queued, "write the changelog", 2, 8*time.Minute),
			sum("t-wait", task.Waiting, "paint the banner", 2, 7*time.Minute),
			sum("t-paus", task.Paused, "refactor the parser", 2, 6*time.Minute),
			sum("t-fail", task.Failed, "port the build to zig", 2, 5*time.Minute),
			sum("t-park", task.Merging, "fix the \x1b[31mred\x1b[0m test", 1, 4*time.Minute),
			sum("t-done", task.Completed, "an old finished task", 2, time.Hour),
		},
		health: []api.TaskHealth{{TaskID: "t-run1", Status: "healthy"}, {TaskID: "t-paus", Status: "paused", Ladder: "paused"}},
		rebase: api.RebaseStatus{Tasks: []api.TaskRebase{{TaskID: "t-run1", Behind: 3}}},
		events: map[task.ID][]event.Event{
			"t-wait": {ev("t-wait", 60*time.Second, event.NeedsInput{Turn: 1, Question: "Which colour should the banner be?"})},
			"t-paus": {ev("t-paus", 50*time.Second, event.TaskStatus{From: task.Running, To: task.Paused, Reason: "stuck: the same edit three times"})},
			"t-fail": {ev("t-fail", 40*time.Second, event.TaskStatus{From: task.Running, To: task.Failed, Reason: "the model refused"})},
			"t-run1": {
				ev("t-run1", 30*time.Second, event.TurnStarted{Turn: 1, Engine: "native", Model: "claude-sonnet-4-5"}),
				ev("t-run1", 29*time.Second, event.Text{Turn: 1, Text: "Let me look at the greeting first."}),
				ev("t-run1", 28*time.Second, event.ToolCall{Turn: 1, Name: "read_file", Args: []byte(`{"path":"greeting.txt"}`)}),
				ev("t-run1", 27*time.Second, event.ToolResult{Turn: 1, Name: "read_file", Size: 14, Preview: "Hello."}),
				ev("t-run1", 26*time.Second, event.TaskMessage{InjectionID: 4, Source: "user", Text: "keep it short"}),
				ev("t-run1", 25*time.Second, event.HealthCheck{Status: "struggling", Confidence: 0.7, Ladder: "hint", Diagnosis: "reads the same file again", Evidence: []event.Evidence{{Step: 3, Kind: "call", What: "read_file greeting.txt"}}}),
				ev("t-run1", 24*time.Second, event.SyncMessageSent{From: "t-que1", Urgency: "helpful", Message: "the greeting lives in greeting.txt"}),
			},
		},
		overlap: map[task.ID][]api.OverlapPair{
			"t-run1": {{A: "t-que1", B: "t-run1", Files: []string{"greeting.txt", "README.md"}, Forecast: "conflict", Conflicts: []string{"greeting.txt"},
				Lines: []api.OverlapLines{{File: "greeting.txt", A: []api.LineRange{{From: 1, To: 1}}, B: []api.LineRange{{From: 1, To: 2}}, Intersect: true}}}},
		},
		merge: api.MergeStatus{Open: []api.MergeEntry{{ID: 7, TaskID: "t-park", State: "parked", Target: "main", Attempts: 2, Detail: "the gate failed: go test"}}},
		learn: []api.Learning{{ID: 1, Kind: "discovery", Summary: "the greeting lives in greeting.txt"}, {ID: 2, Kind: "statement", Summary: "tests need -race"}},
	}
}

// drive runs a command and feeds what it returns back, as the program
// would (batches included).
func drive(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drive(t, m, c)
		}
	case tea.QuitMsg:
	default:
		_, next := m.Update(msg)
		drive(t, m, next)
	}
}

func newModel(t testing.TB, b Backend, w, h int) *Model {
	m := New(context.Background(), b, Options{Now: func() time.Time { return clock }, Editor: "true", Shell: "true"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	drive(t, m, m.loadFleet())
	// The stream says what the running task does now, and that the
	// merging one's merge parked.
	drive(t, m, m.applyEvents(EventsMsg{
		ev("t-run1", 12*time.Second, event.ToolCall{Turn: 2, Name: "bash"}),
		ev("t-park", 10*time.Second, event.MergeParked{Entry: 7, Reason: "the gate failed"}),
	}))
	return m
}

func press(t testing.TB, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "space":
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd := m.Update(msg)
		drive(t, m, cmd)
	}
}

func typeText(t testing.TB, m *Model, s string) {
	for _, r := range s {
		if r == ' ' {
			press(t, m, "space")
		} else {
			press(t, m, string(r))
		}
	}
}

func screenText(m *Model) string { return ansi.Strip(m.Render()) }

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

// checkFits: the screen is h lines, none wider than w.
func checkFits(t *testing.T, m *Model, w, h int) {
	t.Helper()
	lines := strings.Split(m.Render(), "\n")
	if len(lines) != h {
		t.Errorf("the screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d wide, over %d: %q", i, n, w, ansi.Strip(l))
		}
	}
}
