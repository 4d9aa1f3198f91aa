package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestNudge(t *testing.T) {
	t.Parallel()
	reqs := make(chan string, 8)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"POST /v1/tasks/{ref}/nudge": func(w http.ResponseWriter, r *http.Request) {
			var req api.NudgeRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				t.Errorf("decoding the request: %v", err)
			}
			reqs <- r.PathValue("ref") + ": " + req.Text
			if r.PathValue("ref") == "done" {
				w.WriteHeader(http.StatusConflict)
				writeAPI(w, api.Error{Code: api.CodeConflict, Message: "task t-done0 is completed and takes no more messages"})
				return
			}
			w.WriteHeader(http.StatusCreated)
			writeAPI(w, api.Message{ID: 12, TaskID: task.ID("t-4k2x9"), Source: "user", Kind: "nudge", Text: req.Text, CreatedAt: t0})
		},
	})
	code, out, errOut := runCLI(t, home, "", "nudge", "4k2", "run", "the failing test", "alone first")
	if code != ExitOK || out != "nudge #12 queued for t-4k2x9; it is delivered at its next turn boundary\n" {
		t.Errorf("exit %d, stderr %q, output %q", code, errOut, out)
	}
	if r := <-reqs; r != "4k2: run the failing test alone first" {
		t.Errorf("asked %q", r)
	}

	code, out, _ = runCLI(t, home, "", "nudge", "4k2", "stop", "--json")
	var m api.Message
	if err := json.Unmarshal([]byte(out), &m); code != ExitOK || err != nil || m.ID != 12 || m.Kind != "nudge" || m.Text != "stop" {
		t.Errorf("--json: exit %d, %v:\n%s", code, err, out)
	}
	<-reqs

	code, _, errOut = runCLI(t, home, "", "nudge", "done", "stop")
	if code != ExitFailed || !strings.Contains(errOut, "takes no more messages") {
		t.Errorf("finished: exit %d, stderr %q", code, errOut)
	}
	<-reqs

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"nudge"}, "takes a task ID and a MESSAGE, got 0 argument(s)"},
		{[]string{"nudge", "4k2"}, "hint: neuraphage nudge t-4k2x9 run the failing test alone"},
		{[]string{"nudge", "4k2", " ", ""}, "the nudge is empty"},
	} {
		code, out, errOut := runCLI(t, home, "", tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 with %q", tt.args, code, out, errOut, tt.want)
		}
	}
	select {
	case r := <-reqs:
		t.Errorf("a usage error asked the daemon %s", r)
	default:
	}
}
