package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestTaskShowManifest(t *testing.T) {
	t.Parallel()
	tk := task.Task{ID: "t-mf001", Description: "x", Status: task.Running, CreatedAt: t0, Manifest: &task.Manifest{
		Readable: []string{"."}, Writable: []string{"src", "/home/u/.cache/go-build"}, Tools: []string{"Read", "Edit", "Bash"},
		Commands: []string{"go test"}, Env: []string{"PORT"}, Secrets: []string{"GH_TOKEN"}, Complexity: task.High,
		IdleTimeoutSecs: 1800, TotalTimeoutSecs: 14400, Source: "model+recovered", Escalations: 2,
		Note: "dropped beyond the policy: tool \"Task\" \x1b[2J"}}
	bare := task.Task{ID: "t-mf002", Description: "y", Status: task.Queued, CreatedAt: t0}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}": func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("ref") == "bare" {
				writeAPI(w, api.TaskDetail{Task: bare, Readiness: task.Ready})
				return
			}
			writeAPI(w, api.TaskDetail{Task: tk, Readiness: task.Ready})
		},
	})
	code, out, errOut := runCLI(t, home, "", "task", "show", "mf")
	want := "manifest:    high complexity (model+recovered, widened 2 times)\n" +
		"             tools:    Read, Edit, Bash\n" +
		"             commands: go test\n" +
		"             reads:    .\n" +
		"             writes:   src, /home/u/.cache/go-build\n" +
		"             env:      PORT\n" +
		"             secrets:  GH_TOKEN (by name)\n" +
		"             timeouts: idle 30m, total 4h\n" +
		"             note:     dropped beyond the policy: tool \"Task\" \\x1b[2J\n"
	if code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("exit %d, stderr %q; output lacks\n%s\ngot:\n%s", code, errOut, want, out)
	}
	code, out, _ = runCLI(t, home, "", "task", "show", "bare")
	if code != ExitOK || strings.Contains(out, "manifest:") {
		t.Errorf("a task not yet started shows a manifest: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, home, "", "task", "show", "mf", "--json")
	if code != ExitOK || !strings.Contains(out, `"idle_timeout_secs": 1800`) || !strings.Contains(out, `"complexity": "high"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

func TestDescribeLifecycleCoversEveryKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    event.Payload
		want string
	}{
		{event.SandboxCreated{Source: "default", Complexity: "low", Tools: []string{"Read", "Bash"}, Writable: []string{"."}, IdleSecs: 450, TotalSecs: 3600},
			"sandbox manifest (default): low complexity, tools Read,Bash, writes ., timeouts idle 7m30s, total 1h"},
		{event.EngineStarted{Engine: "claude", Dir: "/w/t1"}, "engine claude started in /w/t1"},
		{event.Progress{Turn: 3, FilesRead: 2, FilesWritten: 1, Commits: 1, OutputLines: 9, ElapsedMs: 90000},
			"progress at turn 3: 2 file(s) read, 1 written, 1 commit(s), 9 output line(s), 0 error(s), 0 denial(s), 1m30s in"},
		{event.Timeout{Which: "idle", LimitSecs: 900}, "stopped by the idle timeout: nothing reported for 15m"},
		{event.Timeout{Which: "total", LimitSecs: 7200}, "stopped by the total timeout: the run lasted 2h"},
		{event.PermissionDenied{Tool: "Write", Path: "/etc/x", Write: true}, "permission denied: Write: write /etc/x"},
		{event.PermissionError{Tool: "Task", Reason: "tool Task is beyond the policy (sandbox.tools)"}, "permission error, no fix: tool Task is beyond the policy (sandbox.tools)"},
		{event.PermissionError{Tool: "Edit", Fix: "allow tool Edit"}, "permission error, fix: allow tool Edit"},
		{event.RecoveryAttempt{Strategy: "moderate", Action: "give_up"}, "recovery (moderate): give up"},
		{event.RecoveryAttempt{Strategy: "moderate", Action: "retry", Fix: "allow tool Edit", Escalation: 1}, "recovery (moderate): retry: allow tool Edit (escalation 1)"},
	} {
		if got := describeEvent(event.New(t0, "t-4k2x9", tc.p)); got != tc.want {
			t.Errorf("describeEvent(%s) =\n%q; want\n%q", tc.p.EventKind(), got, tc.want)
		}
	}
}
