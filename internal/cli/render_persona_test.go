package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestDescribePersona(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    event.Payload
		want string
	}{
		{"selected by the router", event.PersonaSelected{Persona: "senior", Method: "router", Reason: "category refactoring is assigned to senior",
			Category: "refactoring", Model: "claude-opus-4-5"},
			"persona senior on claude-opus-4-5 (router: category refactoring is assigned to senior)"},
		{"named by the user", event.PersonaSelected{Persona: "mid", Method: "explicit", Reason: "named when the task was created"},
			"persona mid (explicit: named when the task was created)"},
		{"fallback", event.PersonaSelected{Persona: "mid", Method: "fallback", Reason: "no model for the router tier"},
			"persona mid (fallback: no model for the router tier)"},
		{"escalated by the user", event.PersonaEscalated{From: "mid", To: "senior", Reason: "the tests keep failing", By: "user"},
			"escalated mid → senior by user: the tests keep failing"},
		{"escalated with models", event.PersonaEscalated{From: "mid", To: "senior", FromModel: "sonnet", ToModel: "opus", By: "watcher"},
			"escalated mid → senior by watcher (model sonnet → opus)"},
		{"escalation refused", event.EscalationRefused{From: "architect", Reason: "architect is already the top of the escalation chain", By: "watcher"},
			"escalation from architect refused (asked by watcher): architect is already the top of the escalation chain"},
		{"escalation to a persona refused", event.EscalationRefused{From: "mid", To: "junior", Reason: "disabled", By: "user"},
			"escalation mid → junior refused (asked by user): disabled"},
		{"hook blocked", event.HookActed{Point: "WatcherNudge", Command: "~/hooks/quiet", Action: "blocked", Reason: "no nudges at night"},
			"hook WatcherNudge blocked: no nudges at night (~/hooks/quiet)"},
		{"hook modified", event.HookActed{Point: "PersonaSelected", Action: "modified"},
			"hook PersonaSelected modified"},
		{"hook failed", event.HookFailed{Point: "PersonaSelected", Command: "./pick.sh", Error: "timed out after 5s", TimedOut: true, DurationMs: 5000},
			"hook PersonaSelected failed: timed out after 5s (./pick.sh)"},
		{"phase started", event.PhaseStarted{Index: 0, Phase: "design", Personas: []string{"architect"}, Tasks: []string{"t-x1111"}},
			"phase 1 design started: architect t-x1111"},
		{"parallel phase started", event.PhaseStarted{Index: 2, Phase: "review", Personas: []string{"reviewer", "senior"}, Tasks: []string{"t-a1111", "t-b2222"}},
			"phase 3 review started: reviewer t-a1111, senior t-b2222"},
		{"review done", event.PhaseFinished{Index: 2, Phase: "review", Task: "t-y2222", Persona: "reviewer", Status: "completed", Verdict: "changes",
			Findings: []event.Finding{{Severity: "nitpick", Message: "a"}, {Severity: "critical", File: "a.go", Line: 3, Message: "b"}}},
			"phase 3 review done by reviewer t-y2222: changes, 2 findings (1 critical, 1 nitpick)"},
		{"review approved", event.PhaseFinished{Index: 2, Phase: "review", Task: "t-y2222", Persona: "senior", Status: "completed", Verdict: "approve"},
			"phase 3 review done by senior t-y2222: approve, 0 findings"},
		{"phase done", event.PhaseFinished{Index: 0, Phase: "design", Task: "t-x1111", Persona: "architect", Status: "completed", Summary: "Three components:\nparser, store, api"},
			"phase 1 design done by architect t-x1111: Three components: parser, store, api"},
		{"phase failed", event.PhaseFinished{Index: 1, Phase: "implement", Task: "t-z3333", Persona: "mid", Status: "failed"},
			"phase 2 implement failed: mid t-z3333"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Through describeEvent, as task log, attach and events render them.
			if got := describeEvent(event.New(t0, "t-4k2x9", tt.p)); got != tt.want {
				t.Errorf("describeEvent(%s) =\n%q; want\n%q", tt.p.EventKind(), got, tt.want)
			}
		})
	}
}

// TestDescribePersonaCoversEveryKind: each kind of event/persona.go has a
// line of its own, not the JSON fallback.
func TestDescribePersonaCoversEveryKind(t *testing.T) {
	t.Parallel()
	for _, p := range []event.Payload{event.PersonaSelected{}, event.PersonaEscalated{}, event.EscalationRefused{},
		event.HookActed{}, event.HookFailed{}, event.PhaseStarted{}, event.PhaseFinished{}} {
		if s, ok := describePersona(p); !ok || strings.HasPrefix(s, "{") {
			t.Errorf("%s renders as %q, %v", p.EventKind(), s, ok)
		}
	}
}

func TestTaskShowWorkflowAndPhase(t *testing.T) {
	t.Parallel()
	parent := task.Task{ID: "t-wf001", Description: "Index users.email", Status: task.Waiting, CreatedAt: t0,
		Workflow: []task.Phase{
			{Name: "design", Personas: []string{"architect"}, Instructions: "Plan only.\nDo not write code.\nSay what to build.\nThen stop."},
			{Name: "review", Personas: []string{"reviewer", "senior"}, Review: true},
		}}
	child := task.Task{ID: "t-ch002", Description: "review: Index users.email", Status: task.Running, CreatedAt: t0, ParentID: "t-wf001",
		Persona: "senior", PersonaVia: "escalated", Phase: &task.PhaseRef{Index: 1, Name: "review", Review: true}}
	checker := task.Task{ID: "t-ch003", Description: "check: x", Status: task.Queued, CreatedAt: t0, Persona: "reviewer",
		Phase: &task.PhaseRef{Index: 2, Name: "check", Review: true}}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}": func(w http.ResponseWriter, r *http.Request) {
			switch r.PathValue("ref") {
			case "wf":
				writeAPI(w, api.TaskDetail{Task: parent, Readiness: task.Blocked})
			case "ch":
				writeAPI(w, api.TaskDetail{Task: child, Readiness: task.Ready})
			default:
				writeAPI(w, api.TaskDetail{Task: checker, Readiness: task.Ready})
			}
		},
	})
	code, out, errOut := runCLI(t, home, "", "task", "show", "wf")
	want := "workflow:    2 phases, each run by child tasks (`neuraphage task list` shows them)\n" +
		"             1 design: architect\n" +
		"                 Plan only.\n" +
		"                 Do not write code.\n" +
		"                 … 2 more lines\n" +
		"             2 review: reviewer, senior (in parallel; review: its findings go to the later phases)\n" +
		"readiness:   blocked\n"
	if code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("workflow task: exit %d, stderr %q; output lacks\n%s\ngot:\n%s", code, errOut, want, out)
	}
	if strings.Contains(out, "phase:") || strings.Contains(out, "persona:") {
		t.Errorf("workflow task shows a phase or persona:\n%s", out)
	}

	code, out, _ = runCLI(t, home, "", "task", "show", "ch")
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "persona:") || strings.HasPrefix(l, "phase:") || strings.HasPrefix(l, "parent:") {
			lines = append(lines, l)
		}
	}
	wantLines := []string{"parent:      t-wf001", "persona:     senior (via escalated)", "phase:       2 review"}
	if diff := cmp.Diff(wantLines, lines); code != ExitOK || diff != "" {
		t.Errorf("phase task: exit %d (-want +got):\n%s\n%s", code, diff, out)
	}

	code, out, _ = runCLI(t, home, "", "task", "show", "other")
	if code != ExitOK || !strings.Contains(out, "persona:     reviewer\nphase:       3 check (review)\n") {
		t.Errorf("review phase not named review: exit %d:\n%s", code, out)
	}
}
