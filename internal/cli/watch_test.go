package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// TestWatchLogFollow: watch log --follow shows the session's evaluations,
// then each new one of this session once (a notice of another session's,
// or of one already shown, fetches nothing), and ends with exit 0 when the
// daemon ends the stream, as events --follow does.
func TestWatchLogFollow(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	eval := func(id int64, decision, note string) api.WatchEvaluation {
		return api.WatchEvaluation{ID: id, Task: "t-4k2x9", At: at.Add(time.Duration(id) * time.Minute), Decision: decision, Note: note, Observations: 3}
	}
	var (
		mu     sync.Mutex
		asked  []string
		logFor = map[string][]api.WatchEvaluation{
			"":  {eval(1, "continue", "nothing of concern")},
			"1": {eval(2, "continue", "still fine")},
		}
	)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/watchers/{ref}/log": func(w http.ResponseWriter, r *http.Request) {
			after := r.URL.Query().Get("after")
			mu.Lock()
			asked = append(asked, r.PathValue("ref")+"?after="+after)
			mu.Unlock()
			writeAPI(w, api.WatchLog{Session: api.WatchSession{ID: "w-1", Name: "security"}, Evaluations: logFor[after]})
		},
		"GET /v1/watch": func(w http.ResponseWriter, r *http.Request) {
			if k := r.URL.Query()["kind"]; len(k) != 1 || k[0] != string(event.KindWatchEvaluation) {
				t.Errorf("watch asked for kinds %v", k)
			}
			w.Header().Set("Content-Type", "application/x-ndjson")
			enc := json.NewEncoder(w)
			for _, p := range []event.WatchEvaluation{
				{Session: "w-other", EvaluationID: 7, Decision: "interject"}, // another session's
				{Session: "w-1", EvaluationID: 1, Decision: "continue"},      // shown already
				{Session: "w-1", EvaluationID: 2, Decision: "continue"},      // new
			} {
				if err := enc.Encode(event.New(at, "t-4k2x9", p)); err != nil {
					t.Error(err)
				}
			}
			// Returning ends the stream, as a daemon that stops does.
		},
	})
	code, out, errOut := runCLI(t, home, "", "watch", "log", "security", "--follow")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q; want 0 when the daemon ends the stream", code, errOut)
	}
	if strings.Count(out, "#1 ") != 1 || strings.Count(out, "#2 ") != 1 || strings.Index(out, "#1 ") > strings.Index(out, "#2 ") || strings.Contains(out, "#7") {
		t.Errorf("output:\n%s\nwant #1 then #2, each once, and nothing of another session", out)
	}
	if !strings.Contains(out, "still fine") {
		t.Errorf("output lacks the new evaluation's note:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"security?after=", "w-1?after=1"}; strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("log requests %v, want %v (the whole log, then what came after #1, once)", asked, want)
	}
}
