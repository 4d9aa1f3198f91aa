package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func TestTaskEscalate(t *testing.T) {
	t.Parallel()
	reqs := make(chan string, 8)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"POST /v1/tasks/{ref}/escalate": func(w http.ResponseWriter, r *http.Request) {
			var req api.EscalateRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				t.Errorf("decoding the request: %v", err)
			}
			ref := r.PathValue("ref")
			reqs <- ref + " to=" + req.To + " reason=" + req.Reason
			switch ref {
			case "top":
				w.WriteHeader(http.StatusBadRequest)
				writeAPI(w, api.Error{Code: api.CodeInvalid, Message: "escalation: task t-top00 cannot be escalated: architect is already the top of the escalation chain (junior → mid → senior → architect)"})
			case "zzz":
				w.WriteHeader(http.StatusNotFound)
				writeAPI(w, api.Error{Code: api.CodeNotFound, Message: `task "zzz": not found`, Hint: "`neuraphage task list --all` lists every task"})
			case "idle":
				writeAPI(w, api.Escalation{TaskID: "t-idle0", From: "mid", To: "senior", Applied: true})
			default:
				to := req.To
				if to == "" {
					to = "senior"
				}
				writeAPI(w, api.Escalation{TaskID: "t-abc12", From: "mid", To: to})
			}
		},
	})

	code, out, errOut := runCLI(t, home, "", "task", "escalate", "abc", "--reason", "the tests keep failing")
	if code != ExitOK || out != "t-abc12: mid → senior (at its next turn boundary)\n" {
		t.Errorf("escalate: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if q := <-reqs; q != "abc to= reason=the tests keep failing" {
		t.Errorf("escalate asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "task", "escalate", "idle")
	if code != ExitOK || out != "t-idle0: mid → senior (now)\n" {
		t.Errorf("applied: exit %d, stderr %q, output %q", code, errOut, out)
	}
	<-reqs

	code, out, errOut = runCLI(t, home, "", "task", "escalate", "abc", "--to", "architect", "--json")
	var e api.Escalation
	if err := json.Unmarshal([]byte(out), &e); code != ExitOK || err != nil || e != (api.Escalation{TaskID: "t-abc12", From: "mid", To: "architect"}) {
		t.Errorf("--json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	if q := <-reqs; q != "abc to=architect reason=" {
		t.Errorf("--to asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "task", "escalate", "top")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "architect is already the top of the escalation chain") ||
		!strings.Contains(errOut, "hint: `neuraphage persona list` shows the escalation chain") {
		t.Errorf("refused: exit %d, stdout %q, stderr %q; want exit 2 with the reason and a hint", code, out, errOut)
	}
	<-reqs

	code, _, errOut = runCLI(t, home, "", "task", "escalate", "zzz")
	if code != ExitUsage || !strings.Contains(errOut, "hint: `neuraphage task list --all` lists every task") {
		t.Errorf("unknown task: exit %d, stderr %q", code, errOut)
	}
	<-reqs

	// --to is checked against personas.yaml before the daemon is asked.
	for _, tt := range []struct{ to, want string }{
		{"principal", `--to "principal": no such persona`},
		{"watcher", `--to "watcher": internal to Neuraphage`},
	} {
		code, out, errOut = runCLI(t, home, "", "task", "escalate", "abc", "--to", tt.to)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) ||
			!strings.Contains(errOut, "hint: personas a task can be given: senior, mid, junior, reviewer, architect (`neuraphage persona list`)") {
			t.Errorf("--to %s: exit %d, stdout %q, stderr %q", tt.to, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"task", "escalate"}, {"task", "escalate", "a", "b"}} {
		code, _, errOut = runCLI(t, home, "", args...)
		if code != ExitUsage || !strings.Contains(errOut, "hint: usage: neuraphage task escalate ID") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	select {
	case q := <-reqs:
		t.Errorf("a usage error asked the daemon %s", q)
	default:
	}
}

// TestTaskEscalateToACustomPersona: --to takes the personas personas.yaml
// adds.
func TestTaskEscalateToACustomPersona(t *testing.T) {
	t.Parallel()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"POST /v1/tasks/{ref}/escalate": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.Escalation{TaskID: "t-abc12", From: "senior", To: "dba"})
		},
	})
	file := filepath.Join(home, "config", "personas.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(personasOverride), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, home, "", "task", "escalate", "abc", "--to", "dba")
	if code != ExitOK || out != "t-abc12: senior → dba (at its next turn boundary)\n" {
		t.Errorf("exit %d, stderr %q, output %q", code, errOut, out)
	}
	code, _, errOut = runCLI(t, home, "", "task", "escalate", "abc", "--to", "junior")
	if code != ExitUsage || !strings.Contains(errOut, `--to "junior": disabled`) {
		t.Errorf("disabled: exit %d, stderr %q", code, errOut)
	}
}
