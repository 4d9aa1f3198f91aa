package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func sampleMergeStatus() api.MergeStatus {
	done, later := at(600), at(7200)
	return api.MergeStatus{
		Open: []api.MergeEntry{
			{ID: 4, TaskID: "t-4k2x9", Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Target: "main", State: api.MergeRunning, Attempts: 1,
				Detail: "running the gate", EnqueuedAt: t0, UpdatedAt: t0},
			{ID: 5, TaskID: "t-docs1", Repo: "/src/site", Branch: "neuraphage/t-docs1", Target: "main", State: api.MergeQueued, EnqueuedAt: t0, UpdatedAt: t0},
			{ID: 6, TaskID: "t-7abcd", Repo: "/src/app", Branch: "neuraphage/t-7abcd", Target: "main", State: api.MergeWaiting, Attempts: 2,
				Detail: "the checkout of main at /src/app has\nuncommitted changes", EnqueuedAt: t0, UpdatedAt: t0},
		},
		Recent: []api.MergeEntry{
			{ID: 1, TaskID: "t-aaaaa", Target: "main", State: api.MergeLanded, Commit: "0123456789abcdef", UpdatedAt: done, FinishedAt: &done},
			{ID: 2, TaskID: "t-bbbbb", Target: "main", State: api.MergePR, PRURL: "https://github.com/o/app/pull/12", UpdatedAt: later, FinishedAt: &later},
			{ID: 3, TaskID: "t-ccccc", Target: "main", State: api.MergeParked, Detail: "conflict in auth/token.go", UpdatedAt: later},
		},
	}
}

func TestWriteMergeStatus(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeMergeStatus(&b, sampleMergeStatus(), true, at(3*3600))
	want := `merge queue: 3 open
POS  TASK     BRANCH → TARGET            STATE    ATTEMPTS  DETAIL
1    t-4k2x9  neuraphage/t-4k2x9 → main  running  1         running the gate
1    t-docs1  neuraphage/t-docs1 → main  queued   0         -
2    t-7abcd  neuraphage/t-7abcd → main  waiting  2         the checkout of main at /src/app has uncommitted changes

recent (newest last)
TASK     TARGET  STATE   RESULT                            WHEN  DETAIL
t-aaaaa  main    landed  0123456789                        2h    -
t-bbbbb  main    pr      https://github.com/o/app/pull/12  1h    -
t-ccccc  main    parked  -                                 1h    conflict in auth/token.go
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	b.Reset()
	writeMergeStatus(&b, api.MergeStatus{}, true, t0)
	if want := "merge queue: nothing open\n\nno closed entries yet\n"; b.String() != want {
		t.Errorf("empty status %q, want %q", b.String(), want)
	}
	b.Reset()
	writeMergeStatus(&b, api.MergeStatus{}, false, t0)
	if want := "merge queue: nothing open\n"; b.String() != want {
		t.Errorf("empty status without recent %q, want %q", b.String(), want)
	}
}

func TestMergeCommands(t *testing.T) {
	t.Parallel()
	reqs := make(chan string, 8)
	entry := api.MergeEntry{ID: 9, TaskID: "t-4k2x9", Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Target: "main", State: api.MergeQueued, EnqueuedAt: t0, UpdatedAt: t0}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/merge": func(w http.ResponseWriter, r *http.Request) {
			reqs <- r.URL.RequestURI()
			writeAPI(w, sampleMergeStatus())
		},
		"POST /v1/merge/{ref}/{action}": func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			reqs <- strings.TrimSpace(r.URL.Path + " " + string(body))
			e := entry
			switch {
			case r.PathValue("ref") == "running":
				w.WriteHeader(http.StatusConflict)
				writeAPI(w, api.Error{Code: api.CodeConflict, Message: "task t-running is running; its work is enqueued for merge when it completes"})
				return
			case r.PathValue("action") == "cancel":
				var req api.MergeRequest
				json.Unmarshal(body, &req)
				e.State, e.Detail = api.MergeCancelled, req.Reason
			}
			writeAPI(w, e)
		},
	})

	code, out, errOut := runCLI(t, home, "", "merge", "status")
	if code != ExitOK || !strings.HasPrefix(out, "merge queue: 3 open\n") || !strings.Contains(out, "\nrecent (newest last)\n") {
		t.Errorf("status: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if q := <-reqs; q != "/v1/merge?recent=20" {
		t.Errorf("status asked %s", q)
	}

	code, out, errOut = runCLI(t, home, "", "merge", "status", "--json", "--recent", "3")
	var st api.MergeStatus
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	if diff := cmp.Diff(sampleMergeStatus(), st); diff != "" {
		t.Errorf("status --json (-want +got):\n%s", diff)
	}
	if q := <-reqs; q != "/v1/merge?recent=3" {
		t.Errorf("status --recent 3 asked %s", q)
	}

	code, out, errOut = runCLI(t, home, "", "merge", "enqueue", "4k2")
	if code != ExitOK || out != "t-4k2x9: neuraphage/t-4k2x9 → main is queued (entry 9)\n" {
		t.Errorf("enqueue: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if q := <-reqs; q != "/v1/merge/4k2/enqueue" {
		t.Errorf("enqueue asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "merge", "retry", "4k2", "--json")
	var e api.MergeEntry
	if err := json.Unmarshal([]byte(out), &e); code != ExitOK || err != nil || !cmp.Equal(entry, e) {
		t.Errorf("retry --json: exit %d, %v, stderr %q:\n%s", code, err, errOut, out)
	}
	if q := <-reqs; q != "/v1/merge/4k2/retry" {
		t.Errorf("retry asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "merge", "cancel", "4k2", "--reason", "not now")
	if code != ExitOK || out != "t-4k2x9: neuraphage/t-4k2x9 → main is cancelled (entry 9)\n  not now\n" {
		t.Errorf("cancel: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if q := <-reqs; q != `/v1/merge/4k2/cancel {"reason":"not now"}` {
		t.Errorf("cancel asked %q", q)
	}

	code, out, errOut = runCLI(t, home, "", "merge", "enqueue", "running")
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "is running; its work is enqueued for merge when it completes") {
		t.Errorf("refused enqueue: exit %d, stdout %q, stderr %q; want exit 1 with the reason", code, out, errOut)
	}
	<-reqs
}
