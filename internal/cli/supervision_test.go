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

func TestSupervisionStatsText(t *testing.T) {
	t.Parallel()
	st := api.SupervisionStats{Enabled: true, Running: true, Started: t0.Add(-2 * time.Hour), LastCycle: t0.Add(-3 * time.Second),
		Cycles: 1234, Observations: 56789, Watched: 3, Tier1: map[string]uint64{"repeat": 2, "failing": 5, "apologies": 2, "no-progress": 1},
		Tier2Calls: 12, Tier2Failures: 1, Degraded: true, DegradedReason: "the watcher persona timed out after 30s", DegradedSecs: 45.4,
		Nudges: 4, Escalations: 1, HookBlocks: 1}
	var b bytes.Buffer
	writeSupervisionStats(&b, st, t0, time.UTC)
	want := `watcher: enabled, running since 07:00:00 (2h ago)
cycles:      1234, the last 08:59:57 (3s ago); 56789 observations read; 3 tasks watched
tier 2:      12 calls, 1 failed
degraded:    for 45s, tier 1 alone: the watcher persona timed out after 30s
actions:     4 nudges, 1 escalation, 0 pauses, 0 aborts; 1 blocked by hooks
faults:      0 panics recovered, 0 restarts
tier 1 findings by check:
  failing      5
  apologies    2
  repeat       2
  no-progress  1
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}

	b.Reset()
	writeSupervisionStats(&b, api.SupervisionStats{}, t0, time.UTC)
	if out := b.String(); !strings.HasPrefix(out, "watcher: disabled: no task is supervised") || !strings.HasSuffix(out, "degraded:    no\nactions:     0 nudges, 0 escalations, 0 pauses, 0 aborts; 0 blocked by hooks\nfaults:      0 panics recovered, 0 restarts\ntier 1:      no findings\n") {
		t.Errorf("disabled:\n%s", out)
	}
	b.Reset()
	writeSupervisionStats(&b, api.SupervisionStats{Enabled: true}, t0, time.UTC)
	if out := b.String(); !strings.HasPrefix(out, "watcher: enabled, not running") {
		t.Errorf("not running:\n%s", out)
	}
}

func TestSupervisionStatsCommand(t *testing.T) {
	t.Parallel()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/supervision/stats": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.SupervisionStats{Enabled: true, Running: true, Started: time.Now(), Cycles: 2, Nudges: 1})
		},
	})
	code, out, errOut := runCLI(t, home, "", "supervision", "stats")
	if code != ExitOK || !strings.HasPrefix(out, "watcher: enabled, running since ") || !strings.Contains(out, "actions:     1 nudge, ") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	code, out, _ = runCLI(t, home, "", "supervision", "stats", "--json")
	var st api.SupervisionStats
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil || st.Cycles != 2 || !strings.Contains(out, `"tier1": {}`) {
		t.Errorf("--json: exit %d, %v:\n%s", code, err, out)
	}
	code, _, errOut = runCLI(t, home, "", "supervision", "statz")
	if code != ExitUsage || !strings.Contains(errOut, `unknown command "statz"`) {
		t.Errorf("unknown subcommand: exit %d, stderr %q", code, errOut)
	}
}
