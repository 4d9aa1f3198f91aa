package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// loopEvidence is what the failing check finds in a task running the same
// failing test three times.
var loopEvidence = []event.Evidence{
	{Step: 2, Kind: "result", Tool: "bash", What: `bash {"command":"go test parser/..."} → error: --- FAIL: TestParse`, Exact: true},
	{Step: 5, Kind: "result", Tool: "bash", What: `bash {"command":"go test parser/..."} → error: --- FAIL: TestParse`, Exact: true},
	{Step: 7, Kind: "result", Tool: "bash", What: `bash {"command":"go test parser/..."} → error: --- FAIL: TestParse`},
}

const loopDiagnosis = `the same call failed 3 times in a row with nothing changed in between: bash {"command":"go test parser/..."}`

func TestDescribeWatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    event.Payload
		want string
	}{
		{"stuck, nudged", event.HealthCheck{Status: "stuck", Confidence: 0.9, Check: "failing", Tier: 1, Ladder: "hint", Diagnosis: loopDiagnosis},
			`watcher: stuck (failing, tier 1): the same call failed 3 times in a row with nothing changed in between: bash {"command":"go test par… → nudge (hint)`},
		{"judged by the persona", event.HealthCheck{Status: "struggling", Confidence: 0.75, Check: "wandering", Tier: 2, Ladder: "none", Diagnosis: "reads files without a plan"},
			"watcher: struggling (wandering, tier 2, confidence 0.75): reads files without a plan"},
		{"degraded, escalated", event.HealthCheck{Status: "stuck", Check: "repeat", Tier: 1, Ladder: "escalated", Degraded: true, Diagnosis: "the same call 4 times"},
			"watcher: stuck (repeat, tier 1): the same call 4 times → escalate [degraded: tier 1 alone]"},
		{"healthy again", event.HealthCheck{Status: "healthy", Tier: 1, Ladder: "none"},
			"watcher: healthy (tier 1)"},
		{"paused by the ladder", event.HealthCheck{Status: "runaway", Check: "runaway", Tier: 1, Ladder: "paused", Diagnosis: "300000 tokens since progress"},
			"watcher: runaway (runaway, tier 1): 300000 tokens since progress → pause"},
		{"nudge", event.WatcherNudge{Severity: "warning", Message: "Stop and read the failure.", Check: "failing", Diagnosis: "the same call failed 3 times", Tier: 1, InjectionID: 12, Unheeded: 1},
			"watcher: nudge #12 (warning, failing, tier 1; 1 unheeded before): the same call failed 3 times"},
		{"nudge without a diagnosis", event.WatcherNudge{Severity: "hint", Message: "Try a smaller step.", Unheeded: 2},
			"watcher: nudge (hint; 2 unheeded before): Try a smaller step."},
		{"escalate", event.WatcherEscalate{From: "mid", To: "senior", Check: "failing", Diagnosis: "nudges went unheeded"},
			"watcher: escalate mid → senior (failing): nudges went unheeded"},
		{"escalation refused", event.WatcherEscalate{From: "architect", Refused: "architect is the top of the chain", Check: "repeat", Diagnosis: "the same call 4 times"},
			"watcher: escalation from architect refused: architect is the top of the chain (repeat: the same call 4 times)"},
		{"pause", event.WatcherPause{Diagnosis: "still failing", Check: "failing", Signals: []string{"tier1:failing", "persisted after 3 nudges"}},
			"watcher: paused the task (tier1:failing, persisted after 3 nudges): still failing"},
		{"abort", event.WatcherAbort{Diagnosis: "$3.10 without progress", Check: "runaway", Reason: "hard-limit", Signals: []string{"tier1:runaway"}},
			"watcher: aborted the task (hard limit, tier1:runaway): $3.10 without progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := describeWatcher(tt.p)
			if !ok || got != tt.want {
				t.Errorf("describeWatcher(%s) =\n%q, %v; want\n%q", tt.p.EventKind(), got, ok, tt.want)
			}
		})
	}
}

// TestDescribeWatcherCoversEveryKind: each kind of event/watcher.go has a
// line of its own and hands over its evidence.
func TestDescribeWatcherCoversEveryKind(t *testing.T) {
	t.Parallel()
	for _, p := range []event.Payload{event.HealthCheck{Evidence: loopEvidence}, event.WatcherNudge{Evidence: loopEvidence},
		event.WatcherEscalate{Evidence: loopEvidence}, event.WatcherPause{Evidence: loopEvidence}, event.WatcherAbort{Evidence: loopEvidence}} {
		if s, ok := describeWatcher(p); !ok || !strings.HasPrefix(s, "watcher: ") {
			t.Errorf("%s renders as %q, %v", p.EventKind(), s, ok)
		}
		if got := watcherEvidence(p); len(got) != len(loopEvidence) {
			t.Errorf("%s: evidence %v", p.EventKind(), got)
		}
	}
	if _, ok := describeWatcher(event.TaskStatus{}); ok {
		t.Error("describeWatcher takes a task.status event")
	}
}

// TestDescribeEventRendersWatcherKinds: task log, demo and the timelines
// render a watcher event through describeEvent.
func TestDescribeEventRendersWatcherKinds(t *testing.T) {
	t.Parallel()
	e := event.New(t0, "t-4k2x9", event.HealthCheck{Status: "stuck", Check: "failing", Tier: 1, Ladder: "hint"})
	got := describeEvent(e)
	if want, _ := describeWatcher(e.Payload); got != want {
		t.Errorf("describeEvent = %q; want %q", got, want)
	}
}

func TestEvidenceLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeEvidence(&b, "  ", append(loopEvidence, event.Evidence{Step: 9, Kind: "silence", What: "last progress at 2026-11-21T09:00:00Z"}), 0)
	want := `  step 2 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
  step 5 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
  step 7 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse
  step 9 silence: last progress at 2026-11-21T09:00:00Z
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}

	// A long run keeps its newest steps.
	var many []event.Evidence
	for i := 1; i <= 9; i++ {
		many = append(many, event.Evidence{Step: i, Kind: "text", What: fmt.Sprint("sorry ", i)})
	}
	b.Reset()
	writeEvidence(&b, "", many, evidenceLines)
	want = "… 3 earlier steps\nstep 4 text: sorry 4\nstep 5 text: sorry 5\nstep 6 text: sorry 6\nstep 7 text: sorry 7\nstep 8 text: sorry 8\nstep 9 text: sorry 9\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("capped evidence (-want +got):\n%s", diff)
	}
}

func watcherRun() []event.Event {
	return []event.Event{
		{ID: 30, Time: at(1), Kind: event.KindHealthCheck, TaskID: "t-4k2x9", Payload: event.HealthCheck{Status: "stuck", Confidence: 0.9,
			Check: "failing", Tier: 1, Ladder: "hint", Step: 7, Diagnosis: "the same call failed 3 times", Evidence: loopEvidence}},
		{ID: 31, Time: at(1), Kind: event.KindTaskMessage, TaskID: "t-4k2x9", Payload: event.TaskMessage{InjectionID: 12, Source: "watcher", Kind: "nudge",
			Text: "Stop and read the failure.", Attrs: map[string]string{"severity": "hint"}}},
		{ID: 32, Time: at(1), Kind: event.KindWatcherNudge, TaskID: "t-4k2x9", Payload: event.WatcherNudge{Severity: "hint", Check: "failing",
			Diagnosis: "the same call failed 3 times", Tier: 1, InjectionID: 12, Evidence: loopEvidence[2:]}},
	}
}

func TestWatcherEventsInTheTimeline(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, false)
	for _, e := range watcherRun() {
		w.Print(e)
	}
	ev := `    step 7 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse` + "\n"
	want := `30     09:00:01.000  t-4k2x9  watcher.health     watcher: stuck (failing, tier 1): the same call failed 3 times → nudge (hint)
    step 2 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
    step 5 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
` + ev + `31     09:00:01.000  t-4k2x9  task.message       nudge #12 from watcher queued [severity=hint]: Stop and read the failure.
32     09:00:01.000  t-4k2x9  watcher.nudge      watcher: nudge #12 (hint, failing, tier 1): the same call failed 3 times
` + ev
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}

	// In a transcript (task attach) they are marked lines among the run.
	b.Reset()
	w = newLiveWriter(&b, time.UTC, true)
	for _, e := range watcherRun() {
		w.Print(e)
	}
	want = `⚑ watcher: stuck (failing, tier 1): the same call failed 3 times → nudge (hint)
    step 2 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
    step 5 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
` + ev + `09:00:01.000  task.message     nudge #12 from watcher queued [severity=hint]: Stop and read the failure.
⚑ watcher: nudge #12 (hint, failing, tier 1): the same call failed 3 times
` + ev
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

func TestEventsCommandShowsWatcherEvidence(t *testing.T) {
	t.Parallel()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/events": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.EventList{Events: watcherRun()[2:]})
		},
	})
	code, out, errOut := runCLI(t, home, "", "events", "--kind", "watcher")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || len(lines) != 2 || !strings.HasSuffix(lines[0], "watcher.nudge      watcher: nudge #12 (hint, failing, tier 1): the same call failed 3 times") ||
		lines[1] != `    step 7 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse` {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
}
