package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func sampleRebaseStatus() api.RebaseStatus {
	told, rebased, cycle := at(600), at(60), at(3590)
	return api.RebaseStatus{
		Watcher: api.MainWatcher{Enabled: true, Urgency: "helpful", Watching: true, LastCycle: &cycle, Cycles: 40, Notices: 3, Rebases: 1,
			Repos: []api.MainRef{
				{Repo: "/src/app", Main: "origin/main", Commit: "0123456789abcdef", FetchError: "ssh: could not resolve host"},
				{Repo: "/src/site", Main: "main", Error: "unknown revision main"},
			}},
		Tasks: []api.TaskRebase{
			{TaskID: "t-4k2x9", Status: task.Running, Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Main: "origin/main", MainCommit: "0123456789abcdef",
				Behind: 3, Ahead: 2, NewCommits: []string{"fix the parser"}, Forecast: "conflict", Conflicts: []string{"auth/token.go", "auth/token_test.go"},
				Overlap: []string{"auth/token.go", "auth/token_test.go"}, State: "notified", LastNotice: &told, LastNoticeMain: "0123456789abcdef", LastRebased: &rebased},
			{TaskID: "t-7abcd", Status: task.Paused, Repo: "/src/app", Branch: "neuraphage/t-7abcd", Main: "origin/main", MainCommit: "0123456789abcdef",
				Behind: 1, Forecast: "overlap", Overlap: []string{"README.md"}, State: "behind"},
			{TaskID: "t-9wxyz", Status: task.Running, Repo: "/src/app", Branch: "neuraphage/t-9wxyz", Main: "origin/main", MainCommit: "0123456789abcdef",
				Behind: 1, Ahead: 4, Forecast: "clean", State: "unrelated", Note: "main changed none of its files"},
			{TaskID: "t-aaaaa", Status: task.Running, Repo: "/src/app", Branch: "neuraphage/t-aaaaa", Main: "origin/main", MainCommit: "0123456789abcdef",
				Ahead: 1, State: "up_to_date"},
		},
	}
}

func TestWriteRebaseStatus(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeRebaseStatus(&b, sampleRebaseStatus(), at(3600))
	want := `main watcher: enabled, urgency helpful, watching through filesystem notifications
  /src/app: origin/main at 0123456789; the last fetch failed: ssh: could not resolve host
  /src/site: main cannot be read: unknown revision main
TASK     STATUS   BRANCH              MAIN         BEHIND  AHEAD  FORECAST                                     STATE       LAST NOTICE  LAST REBASED
t-4k2x9  running  neuraphage/t-4k2x9  origin/main  3       2      conflict: auth/token.go, auth/token_test.go  notified    50m          59m
t-7abcd  paused   neuraphage/t-7abcd  origin/main  1       0      overlap: README.md                           behind      -            -
t-9wxyz  running  neuraphage/t-9wxyz  origin/main  1       4      clean                                        unrelated   -            -
t-aaaaa  running  neuraphage/t-aaaaa  origin/main  0       1      -                                            up_to_date  -            -
note t-9wxyz: main changed none of its files
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	b.Reset()
	writeRebaseStatus(&b, api.RebaseStatus{Watcher: api.MainWatcher{Enabled: true, Urgency: "blocking", Panics: 2}}, t0)
	want = "main watcher: enabled, urgency blocking, polling only (no filesystem notifications); 2 cycles crashed (see the daemon log)\n" +
		"no active task branches: a task's branch is watched from when its worktree is made until its work lands\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("empty status (-want +got):\n%s", diff)
	}

	b.Reset()
	writeRebaseStatus(&b, api.RebaseStatus{Watcher: api.MainWatcher{Urgency: "helpful"}}, t0)
	if !strings.HasPrefix(b.String(), "main watcher: disabled: ") || !strings.Contains(b.String(), "supervision.main_watcher.enabled true") {
		t.Errorf("disabled watcher: %q", b.String())
	}
}

func TestWriteRebaseRequests(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeRebaseRequests(&b, []api.RebaseRequest{
		{TaskID: "t-4k2x9", Outcome: "requested", Note: "rebases at its next tool boundary", Behind: 3, Main: "main"},
		{TaskID: "t-7abcd", Outcome: "requested", Note: "rebases when it is resumed (`neuraphage task resume t-7abcd`)", Behind: 1, Main: "origin/main"},
		{TaskID: "t-9wxyz", Outcome: "up_to_date", Note: "already has main (0123456)", Main: "main"},
		{TaskID: "t-aaaaa", Outcome: "refused", Note: "task t-aaaaa cannot be rebased: its branch neuraphage/t-aaaaa is missing"},
	})
	want := "t-4k2x9: requested — rebases at its next tool boundary (3 commits behind main)\n" +
		"t-7abcd: requested — rebases when it is resumed (`neuraphage task resume t-7abcd`) (1 commit behind origin/main)\n" +
		"t-9wxyz: up to date — already has main (0123456)\n" +
		"t-aaaaa: refused: task t-aaaaa cannot be rebased: its branch neuraphage/t-aaaaa is missing\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestRebaseCommands(t *testing.T) {
	t.Parallel()
	reqs := make(chan string, 8)
	one := api.RebaseRequest{TaskID: "t-4k2x9", Outcome: "requested", Note: "rebases at its next tool boundary", Behind: 3, Main: "main"}
	all := []api.RebaseRequest{one, {TaskID: "t-aaaaa", Outcome: "refused", Note: "task t-aaaaa cannot be rebased: its branch is missing"}}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/rebase": func(w http.ResponseWriter, r *http.Request) {
			reqs <- r.Method + " " + r.URL.Path
			writeAPI(w, sampleRebaseStatus())
		},
		"POST /v1/rebase": func(w http.ResponseWriter, r *http.Request) {
			reqs <- r.Method + " " + r.URL.Path
			writeAPI(w, all)
		},
		"POST /v1/tasks/{ref}/rebase": func(w http.ResponseWriter, r *http.Request) {
			reqs <- r.Method + " " + r.URL.Path
			switch r.PathValue("ref") {
			case "merging":
				w.WriteHeader(http.StatusConflict)
				writeAPI(w, api.Error{Code: api.CodeConflict, Message: "task t-merging is in the merge queue, which brings its branch up to date itself"})
			case "zzz":
				w.WriteHeader(http.StatusNotFound)
				writeAPI(w, api.Error{Code: api.CodeNotFound, Message: `task "zzz": not found`, Hint: "`neuraphage rebase status` shows the watched task branches"})
			default:
				writeAPI(w, one)
			}
		},
	})

	code, out, errOut := runCLI(t, home, "", "rebase", "status")
	if code != ExitOK || !strings.HasPrefix(out, "main watcher: enabled, urgency helpful") || !strings.Contains(out, "\nt-4k2x9  running  ") {
		t.Errorf("status: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if q := <-reqs; q != "GET /v1/rebase" {
		t.Errorf("status asked %s", q)
	}

	code, out, errOut = runCLI(t, home, "", "rebase", "status", "--json")
	var st api.RebaseStatus
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	if diff := cmp.Diff(sampleRebaseStatus(), st); diff != "" {
		t.Errorf("status --json (-want +got):\n%s", diff)
	}
	<-reqs

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "4k2")
	if code != ExitOK || out != "t-4k2x9: requested — rebases at its next tool boundary (3 commits behind main)\n" {
		t.Errorf("rebase: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if q := <-reqs; q != "POST /v1/tasks/4k2/rebase" {
		t.Errorf("rebase asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "4k2", "--json")
	var r api.RebaseRequest
	if err := json.Unmarshal([]byte(out), &r); code != ExitOK || err != nil || r != one {
		t.Errorf("rebase --json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	<-reqs

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "--all")
	if code != ExitOK || out != "t-4k2x9: requested — rebases at its next tool boundary (3 commits behind main)\n"+
		"t-aaaaa: refused: task t-aaaaa cannot be rebased: its branch is missing\n" {
		t.Errorf("rebase --all: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if q := <-reqs; q != "POST /v1/rebase" {
		t.Errorf("rebase --all asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "--all", "--json")
	var rs []api.RebaseRequest
	if err := json.Unmarshal([]byte(out), &rs); code != ExitOK || err != nil || !cmp.Equal(all, rs) {
		t.Errorf("rebase --all --json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	<-reqs

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "merging")
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "is in the merge queue, which brings its branch up to date itself") {
		t.Errorf("refused rebase: exit %d, stdout %q, stderr %q; want exit 1 with the reason", code, out, errOut)
	}
	<-reqs

	code, out, errOut = runCLI(t, home, "", "task", "rebase", "zzz")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "hint: `neuraphage rebase status` shows the watched task branches") {
		t.Errorf("unknown task: exit %d, stdout %q, stderr %q; want exit 2 with the hint", code, out, errOut)
	}
	<-reqs

	for _, args := range [][]string{{"task", "rebase"}, {"task", "rebase", "4k2", "--all"}, {"task", "rebase", "4k2", "7ab"}} {
		code, out, errOut = runCLI(t, home, "", args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "--all") || !strings.Contains(errOut, "hint: e.g. `neuraphage task rebase t-4k2x9`") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error with a hint", args, code, out, errOut)
		}
	}
	select {
	case q := <-reqs:
		t.Errorf("a usage error asked the daemon %s", q)
	default:
	}
}

// TestRebaseAllWithNothingBehind: --all with no task behind main says so;
// --json prints an empty array.
func TestRebaseAllWithNothingBehind(t *testing.T) {
	t.Parallel()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"POST /v1/rebase": func(w http.ResponseWriter, r *http.Request) { writeAPI(w, []api.RebaseRequest{}) },
	})
	code, out, errOut := runCLI(t, home, "", "task", "rebase", "--all")
	if code != ExitOK || out != "no task is behind main: nothing to rebase\n" {
		t.Errorf("exit %d, stderr %q, output %q", code, errOut, out)
	}
	code, out, _ = runCLI(t, home, "", "task", "rebase", "--all", "--json")
	if code != ExitOK || out != "[]\n" {
		t.Errorf("--json: exit %d, output %q", code, out)
	}
}
