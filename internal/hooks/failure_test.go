package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/proc/proctest"
)

func TestDecideFailingHook(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		cmd  string
		code int
		err  string
	}{
		{"exit with stderr", `echo '{"decision":{"persona":"reviewer"}}'; echo first >&2; echo boom >&2; exit 3`, 3, "exited 3: boom"},
		{"exit without stderr", `echo '{"decision":{"persona":"reviewer"}}'; exit 1`, 1, "exited 1"},
		{"long stderr line clipped", "echo " + long + " >&2; exit 2", 2, "exited 2: " + long[:200] + "…"},
		{"killed by a signal", "kill -KILL $$", 128 + int(syscall.SIGKILL), "exited 137"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: tt.cmd}}})
			d := coder()
			if v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil); v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if diff := cmp.Diff(coder(), d); diff != "" {
				t.Errorf("decision changed (-want +got):\n%s", diff)
			}
			checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaSelected", Command: tt.cmd, Error: tt.err, ExitCode: tt.code}}})
		})
	}
}

func TestDecideReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stdout string
		err    string // prefix of the failure; "" for none
	}{
		{"nothing", "", ""},
		{"blank lines", "\n  \n", ""},
		{"empty object", "{}", ""},
		{"empty change", `{"decision":{}}`, ""},
		{"not JSON", "not json", `stdout is not a reply (`},
		{"unknown key", `{"blok":true}`, `stdout is not a reply (json: unknown field "blok"): "{\"blok\":true}"`},
		{"two objects", `{} {"block":true}`, "stdout has more than one JSON object"},
		{"array", `[]`, `stdout is not a reply (`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := replying(tt.stdout)
			r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.WatcherNudge, Command: cmd}}})
			d := coder()
			if v := r.Decide(t.Context(), hooks.WatcherNudge, "task-1", &d, nil); v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if diff := cmp.Diff(coder(), d); diff != "" {
				t.Errorf("decision changed (-want +got):\n%s", diff)
			}
			got := rec.all()
			if tt.err == "" {
				checkReports(t, rec, nil)
				return
			}
			if len(got) != 1 {
				t.Fatalf("reports %+v, want one failure", got)
			}
			f, ok := got[0].P.(event.HookFailed)
			if !ok {
				t.Fatalf("report %+v, want a HookFailed", got[0])
			}
			if !strings.HasPrefix(f.Error, tt.err) {
				t.Errorf("Error = %q, want it to start %q", f.Error, tt.err)
			}
			if f.ExitCode != 0 || f.TimedOut || f.Point != "WatcherNudge" || f.Command != cmd {
				t.Errorf("failure %+v", f)
			}
		})
	}
}

func TestDecideNonJSONQuotesStdout(t *testing.T) {
	t.Parallel()
	out := strings.Repeat("y", 500)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.WatcherNudge, Command: replying(out)}}})
	d := coder()
	r.Decide(t.Context(), hooks.WatcherNudge, "task-1", &d, nil)
	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("reports %+v, want one failure", got)
	}
	f, _ := got[0].P.(event.HookFailed)
	if want := `: "` + strings.Repeat("y", 120) + `…"`; !strings.HasSuffix(f.Error, want) {
		t.Errorf("Error = %q, want it to end with the first 120 bytes of stdout, %q", f.Error, want)
	}
}

func TestDecideTimeout(t *testing.T) {
	t.Parallel()
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: "sleep 5", Timeout: 200 * time.Millisecond}}})
	d := coder()
	start := time.Now()
	v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil)
	// A bound on a hang, not a benchmark: the hook would take 5s.
	if el := time.Since(start); el >= 3*time.Second {
		t.Errorf("Decide took %v with a 200ms hook timeout", el)
	}
	if v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaSelected", Command: "sleep 5",
		Error: "timed out after 200ms", ExitCode: 128 + int(syscall.SIGTERM), TimedOut: true}}})
	if f, _ := rec.all()[0].P.(event.HookFailed); f.DurationMs < 200 {
		t.Errorf("DurationMs = %d, want at least the timeout", f.DurationMs)
	}
}

func TestDecideCancelled(t *testing.T) {
	t.Parallel()
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := "touch " + sq(ran)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: cmd}}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := coder()
	if v := r.Decide(ctx, hooks.PersonaSelected, "task-1", &d, nil); v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	if exists(ran) {
		t.Error("the hook ran with a cancelled context")
	}
	checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaSelected", Command: cmd,
		Error: "cancelled: the daemon is stopping", ExitCode: -1}}})
}

func TestDecideHookThatCannotStart(t *testing.T) {
	t.Parallel()
	cmd := replying(`{"decision":{"persona":"reviewer"}}`)
	r, rec := newRunner(t, hooks.Options{Dir: "/nonexistent/dir", Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: cmd}}})
	d := coder()
	if v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil); v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	if diff := cmp.Diff(coder(), d); diff != "" {
		t.Errorf("decision changed (-want +got):\n%s", diff)
	}
	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("reports %+v, want one failure", got)
	}
	f, _ := got[0].P.(event.HookFailed)
	// The start error comes from os/exec; on Linux a failed chdir in the
	// child reads "fork/exec /bin/sh: no such file or directory".
	if want := "starting sh -c " + strconv.Quote(cmd) + ": "; !strings.HasPrefix(f.Error, want) || !strings.HasSuffix(f.Error, "no such file or directory") {
		t.Errorf("Error = %q, want it to start %q and end with ENOENT's text", f.Error, want)
	}
	if f.ExitCode != 0 || f.TimedOut || f.Point != "PersonaSelected" || f.Command != cmd || got[0].ID != "task-1" {
		t.Errorf("report %+v", got[0])
	}
}

func TestDecideDecisionThatDoesNotMarshal(t *testing.T) {
	t.Parallel()
	ran := filepath.Join(t.TempDir(), "ran")
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: "touch " + sq(ran)}}})
	d := struct{ C chan int }{}
	if v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil); v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	if exists(ran) {
		t.Error("the hook ran on a decision that does not marshal")
	}
	checkReports(t, rec, nil)
}

func TestDecideChainsHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := replying(`{"decision":{"persona":"reviewer"},"reason":"r1"}`)
	second := `cat > in2.json; echo '{"decision":{"method":"hook"},"reason":"r2"}'`
	third := "cat > in3.json"
	r, rec := newRunner(t, hooks.Options{Dir: dir, Hooks: []hooks.Hook{
		{Point: hooks.PersonaSelected, Command: first},
		{Point: hooks.PersonaSelected, Command: second},
		{Point: hooks.PersonaSelected, Command: third},
	}})
	d := coder()
	v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil)
	if want := (hooks.Verdict{Modified: true, Reason: "r2"}); v != want {
		t.Errorf("Verdict = %+v, want %+v", v, want)
	}
	if diff := cmp.Diff(choice{Persona: "reviewer", Method: "hook", Tags: []string{"go"}}, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{
		"in2.json": `{"persona":"reviewer","method":"router","tags":["go"]}`,
		"in3.json": `{"persona":"reviewer","method":"hook","tags":["go"]}`,
	} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var in hooks.Input
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatal(err)
		}
		if string(in.Decision) != want {
			t.Errorf("%s: decision %s, want %s", name, in.Decision, want)
		}
	}
	checkReports(t, rec, []report{
		{"task-1", event.HookActed{Point: "PersonaSelected", Command: first, Action: "modified", Reason: "r1"}},
		{"task-1", event.HookActed{Point: "PersonaSelected", Command: second, Action: "modified", Reason: "r2"}},
	})
}

// At an observe-only point Decide and Notify start the hook and return
// while it runs; Close ends it and waits for it to finish. The hook cannot
// get past writing the ready fifo until the test reads it, which the test
// does only after Decide or Notify has returned.
func TestObserveRunsInBackgroundAndCloseJoins(t *testing.T) {
	t.Parallel()
	esc := event.PersonaEscalated{From: "coder", To: "architect", By: "watcher"}
	tests := []struct {
		name  string
		start func(r *hooks.Runner, ctx context.Context) hooks.Verdict
	}{
		{"Decide", func(r *hooks.Runner, ctx context.Context) hooks.Verdict {
			d := esc
			return r.Decide(ctx, hooks.PersonaEscalated, "task-1", &d, func() error { panic("check called at an observe-only point") })
		}},
		{"Notify", func(r *hooks.Runner, _ context.Context) hooks.Verdict {
			r.Notify(hooks.PersonaEscalated, "task-1", esc)
			return hooks.Verdict{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ready := mkfifo(t, dir, "ready")
			// On SIGTERM the hook copies its input: the file exists only if
			// Close waited for the hook to finish.
			cmd := `trap 'sleep 0.1; cp in.json closed.json; exit 0' TERM; cat > in.json; echo ready > ready; sleep 1000 & wait`
			r, rec := newRunner(t, hooks.Options{Dir: dir, Hooks: []hooks.Hook{{Point: hooks.PersonaEscalated, Command: cmd, Timeout: time.Minute}}})
			returned := make(chan hooks.Verdict, 1)
			go func() { returned <- tt.start(r, t.Context()) }()
			if v := within(t, returned, tt.name+" returning while its hook runs"); v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if got := within(t, readFifo(ready), "hook starting"); got != "ready\n" {
				t.Fatalf("fifo read %q", got)
			}
			if exists(filepath.Join(dir, "closed.json")) {
				t.Fatal("closed.json exists before Close")
			}
			r.Close()
			raw, err := os.ReadFile(filepath.Join(dir, "closed.json"))
			if err != nil {
				t.Fatalf("after Close: %v", err)
			}
			var in hooks.Input
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			if in.Hook != hooks.PersonaEscalated || in.TaskID != "task-1" || in.CanModify || in.CanBlock ||
				string(in.Decision) != `{"from":"coder","to":"architect","by":"watcher"}` {
				t.Errorf("input %s", raw)
			}
			// Close ended the hook: it reports it as cancelled though the
			// hook exited 0.
			checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaEscalated", Command: cmd,
				Error: "cancelled: the daemon is stopping"}}})
		})
	}
}

func TestCloseKillsBackgroundHooks(t *testing.T) {
	proctest.Subreaper(t)
	dir := t.TempDir()
	ready := mkfifo(t, dir, "ready")
	cmd := `sleep 1000 & echo $$ $! > ready; wait`
	r, rec := newRunner(t, hooks.Options{Dir: dir, Hooks: []hooks.Hook{{Point: hooks.WatcherAbort, Command: cmd, Timeout: time.Hour}}})
	r.Notify(hooks.WatcherAbort, "task-1", coder())
	f := strings.Fields(within(t, readFifo(ready), "hook starting"))
	if len(f) != 2 {
		t.Fatalf("hook printed %q, want two pids", f)
	}
	pgid, err1 := strconv.Atoi(f[0])
	child, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("hook printed %q, want two pids", f)
	}
	start := time.Now()
	r.Close()
	// A bound on a hang: SIGTERM ends both at once; the grace is 1s.
	if el := time.Since(start); el >= 3*time.Second {
		t.Errorf("Close took %v", el)
	}
	proctest.GroupGone(t, pgid, []int{child}, safety)
	checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "WatcherAbort", Command: cmd,
		Error: "cancelled: the daemon is stopping", ExitCode: 128 + int(syscall.SIGTERM)}}})
	r.Close() // idempotent
}

func TestNotifyAfterClose(t *testing.T) {
	t.Parallel()
	ran := filepath.Join(t.TempDir(), "ran")
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{
		{Point: hooks.PersonaEscalated, Command: "touch " + sq(ran)},
		{Point: hooks.SyncerDelivered, Command: "touch " + sq(ran)},
	}})
	r.Close()
	r.Notify(hooks.PersonaEscalated, "task-1", coder())
	d := coder()
	if v := r.Decide(t.Context(), hooks.SyncerDelivered, "task-1", &d, nil); v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	r.Close() // would wait for anything started
	if exists(ran) {
		t.Error("a hook ran after Close")
	}
	checkReports(t, rec, nil)
}

// Notify racing Close neither panics (a WaitGroup reused while waited on)
// nor lets Close return before a hook it must wait for; run with -race.
func TestNotifyConcurrentWithClose(t *testing.T) {
	t.Parallel()
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.SyncerIgnored, Command: "sleep 1000"}}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				r.Notify(hooks.SyncerIgnored, "task-1", coder())
			}
		})
	}
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	within(t, closed, "Close")
	wg.Wait()
	r.Close()
	for _, got := range rec.all() {
		f, ok := got.P.(event.HookFailed)
		if !ok || f.Error != "cancelled: the daemon is stopping" {
			t.Errorf("report %+v, want only cancellations", got)
		}
	}
	if n := len(rec.all()); n > 20 {
		t.Errorf("%d reports for 20 notifications", n)
	}
}
