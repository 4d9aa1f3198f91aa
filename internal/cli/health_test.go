package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func sampleHealth(now time.Time) []api.TaskHealth {
	return []api.TaskHealth{
		{TaskID: "t-4k2x9", Status: "stuck", Confidence: 0.9, Check: "failing", Tier: 1, Ladder: "warning", Unheeded: 1,
			Diagnosis: loopDiagnosis, LastCheck: now.Add(-90 * time.Second), Steps: 12, StepsSinceProgress: 7,
			TokensSinceProgress: 34_200, USDSinceProgress: 0.1234, LastProgress: now.Add(-3 * time.Minute), Evidence: loopEvidence},
		{TaskID: "t-7abcd", Status: "healthy", Confidence: 1, Ladder: "none", LastCheck: now.Add(-5 * time.Second), Steps: 30},
		{TaskID: "t-9wxyz", Status: "unsupervised", Ladder: "none"},
		{TaskID: "t-m0de1", State: "running", Status: "healthy", Activity: "waiting on model 95 s, attempt 2 of 5", Ladder: "none", LastCheck: now.Add(-95 * time.Second), Steps: 4,
			Model: &api.ModelCall{Turn: 3, Since: now.Add(-95 * time.Second), WaitingSecs: 95, Attempt: 2, MaxAttempts: 5,
				LastError: "timeout: stream idle timeout"}},
		{TaskID: "t-p4use", State: "paused", Status: "paused", Activity: "paused", Ladder: "none", LastCheck: now.Add(-time.Hour), Steps: 9},
		{TaskID: "t-q0eue", State: "queued", Status: "queued", Activity: "queued", Ladder: "none"},
	}
}

func TestHealthTable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeHealthTable(&b, sampleHealth(t0), t0)
	want := `TASK     STATUS        CONFIDENCE  ACTIVITY                               LADDER   UNHEEDED  LAST CHECK  CHECK    DIAGNOSIS
t-4k2x9  stuck         0.90        -                                      warning  1         1m          failing  the same call failed 3 times in a row with nothing changed in between…
t-7abcd  healthy       1.00        -                                      none     0         5s          -        -
t-9wxyz  unsupervised  -           -                                      none     0         -           -        -
t-m0de1  healthy       -           waiting on model 95 s, attempt 2 of 5  none     0         1m          -        -
t-p4use  paused        -           paused                                 none     0         1h          -        -
t-q0eue  queued        -           queued                                 none     0         -           -        -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	b.Reset()
	writeHealthTable(&b, nil, t0)
	if !strings.HasPrefix(b.String(), "no task is being watched") {
		t.Errorf("empty: %q", b.String())
	}
}

func TestTaskHealthInDetail(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTaskHealth(&b, sampleHealth(t0)[0], t0, time.UTC)
	want := `task:        t-4k2x9
status:      stuck (tier 1, confidence 0.90)
check:       failing
diagnosis:   the same call failed 3 times in a row with nothing changed in between: bash {"command":"go test parser/..."}
ladder:      warning (1 nudge unheeded)
last check:  08:58:30 (1m ago)
steps:       12, 7 since the last progress
spent:       34.2k tokens, $0.1234 since the last progress
progress:    last 08:57:00 (3m ago)
evidence:
    step 2 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
    step 5 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)
    step 7 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("detail (-want +got):\n%s", diff)
	}
}

// A task waiting on its model shows the wait, its attempt and the last
// attempt's error.
func TestTaskHealthWaitingOnModel(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTaskHealth(&b, sampleHealth(t0)[3], t0, time.UTC)
	want := `task:        t-m0de1
status:      healthy
activity:    waiting on model 95 s, attempt 2 of 5
model error: timeout: stream idle timeout (the last attempt's)
ladder:      none
last check:  08:58:25 (1m ago)
steps:       4, 0 since the last progress
spent:       0 tokens, $0.0000 since the last progress
progress:    last -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("detail (-want +got):\n%s", diff)
	}
}

func TestHealthCommand(t *testing.T) {
	t.Parallel()
	queries := make(chan string, 8)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/supervision/health": func(w http.ResponseWriter, r *http.Request) {
			queries <- r.URL.RawQuery
			hs := sampleHealth(time.Now())
			switch r.URL.Query().Get("task") {
			case "":
				writeAPI(w, map[string]any{"tasks": hs})
			case "4k2":
				writeAPI(w, map[string]any{"tasks": hs[:1]})
			case "new":
				writeAPI(w, map[string]any{"tasks": []api.TaskHealth{}})
			default:
				w.WriteHeader(http.StatusNotFound)
				writeAPI(w, api.Error{Code: api.CodeNotFound, Message: `task "zzz": not found`, Hint: "`neuraphage task list --all` lists every task"})
			}
		},
	})
	code, out, errOut := runCLI(t, home, "", "health")
	if code != ExitOK || !strings.HasPrefix(out, "TASK     STATUS") || strings.Count(out, "\n") != 7 {
		t.Errorf("table: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	if q := <-queries; q != "" {
		t.Errorf("query %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "health", "4k2")
	if code != ExitOK || !strings.HasPrefix(out, "task:        t-4k2x9\nstatus:      stuck (tier 1, confidence 0.90)\n") ||
		!strings.HasSuffix(out, "evidence:\n"+`    step 2 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)`+"\n"+
			`    step 5 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse (exact)`+"\n"+
			`    step 7 result bash: bash {"command":"go test parser/..."} → error: --- FAIL: TestParse`+"\n") {
		t.Errorf("one task: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	if q := <-queries; q != "task=4k2" {
		t.Errorf("query %q", q)
	}

	code, out, _ = runCLI(t, home, "", "health", "--json")
	var all []api.TaskHealth
	if err := json.Unmarshal([]byte(out), &all); code != ExitOK || err != nil || len(all) != 6 || all[2].Status != "unsupervised" ||
		!strings.Contains(out, `"model": {`) || !strings.Contains(out, `"waiting_secs": 95`) || !strings.Contains(out, `"max_attempts": 5`) ||
		!strings.Contains(out, `"state": "paused"`) || !strings.Contains(out, `"activity": "queued"`) {
		t.Errorf("--json: exit %d, %v:\n%s", code, err, out)
	}
	<-queries
	code, out, _ = runCLI(t, home, "", "health", "4k2", "--json")
	var one api.TaskHealth
	if err := json.Unmarshal([]byte(out), &one); code != ExitOK || err != nil || one.TaskID != "t-4k2x9" || len(one.Evidence) != 3 {
		t.Errorf("one --json: exit %d, %v:\n%s", code, err, out)
	}
	<-queries

	code, _, errOut = runCLI(t, home, "", "health", "new")
	if code != ExitFailed || !strings.Contains(errOut, "the Watcher knows nothing of task new yet") {
		t.Errorf("not seen: exit %d, stderr %q", code, errOut)
	}
	<-queries
	code, _, errOut = runCLI(t, home, "", "health", "zzz")
	if code != ExitUsage || !strings.Contains(errOut, "hint: `neuraphage task list --all` lists every task") {
		t.Errorf("unknown: exit %d, stderr %q", code, errOut)
	}
	<-queries
	code, _, errOut = runCLI(t, home, "", "health", "a", "b")
	if code != ExitUsage || !strings.Contains(errOut, "takes at most one ID") || !strings.Contains(errOut, "hint: usage: neuraphage health [ID]") {
		t.Errorf("two ids: exit %d, stderr %q", code, errOut)
	}
}

// TestSupervisionCommandsWithoutSupervision: a daemon that does not serve
// supervision answers 503; the commands say so, exit 3, with the hint.
func TestSupervisionCommandsWithoutSupervision(t *testing.T) {
	t.Parallel()
	unavailable := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		writeAPI(w, api.Error{Code: api.CodeUnavailable, Message: "supervision is not served by this daemon", Hint: "see the Watcher's settings"})
	}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/supervision/health":    unavailable,
		"GET /v1/supervision/diagnoses": unavailable,
		"GET /v1/supervision/stats":     unavailable,
		"POST /v1/tasks/{ref}/nudge":    unavailable,
	})
	for _, args := range [][]string{{"health"}, {"watcher", "diagnoses"}, {"supervision", "stats"}, {"nudge", "4k2", "try", "again"}} {
		code, out, errOut := runCLI(t, home, "", args...)
		if code != ExitUnreachable || out != "" || !strings.Contains(errOut, "supervision is not served by this daemon") ||
			!strings.Contains(errOut, "hint: see the Watcher's settings") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
