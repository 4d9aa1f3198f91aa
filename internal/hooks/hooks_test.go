package hooks_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// safety bounds anything that should end: generous, never a timing
// assertion.
const safety = 60 * time.Second

// report is one call of Options.Report.
type report struct {
	ID task.ID
	P  event.Payload
}

// recorder collects reports; hooks at observe-only points report from
// their own goroutines.
type recorder struct {
	mu  sync.Mutex
	got []report // guarded by mu
}

func (r *recorder) report(id task.ID, p event.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, report{id, p})
}

func (r *recorder) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.got...)
}

// newRunner returns a Runner with the recorder as its Report, closed when
// the test ends.
func newRunner(t *testing.T, o hooks.Options) (*hooks.Runner, *recorder) {
	t.Helper()
	rec := &recorder{}
	o.Report = rec.report
	r := hooks.New(o)
	t.Cleanup(r.Close)
	return r, rec
}

// ignoreDuration drops the one field of a failure that depends on timing.
var ignoreDuration = cmpopts.IgnoreFields(event.HookFailed{}, "DurationMs")

func checkReports(t *testing.T, rec *recorder, want []report) {
	t.Helper()
	if diff := cmp.Diff(want, rec.all(), ignoreDuration, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// sq quotes s for the shell.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// replying is a hook command that reads its input and prints out.
func replying(out string) string { return "cat >/dev/null; printf '%s\\n' " + sq(out) }

// choice is a decision as a caller would pass it.
type choice struct {
	Persona string   `json:"persona"`
	Method  string   `json:"method"`
	Tags    []string `json:"tags"`
}

func coder() choice { return choice{Persona: "coder", Method: "router", Tags: []string{"go"}} }

// mkfifo makes a named pipe in dir, used to learn that a hook has reached a
// given line without sleeping.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFifo starts reading the fifo at p; the result is delivered once a
// writer has opened it, written and closed it.
func readFifo(p string) <-chan string {
	c := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(p)
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		c <- string(b)
	}()
	return c
}

func within[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(safety)
	defer timer.Stop()
	select {
	case v := <-c:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, safety)
		panic("unreachable")
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestPointCapabilities(t *testing.T) {
	t.Parallel()
	type caps struct{ Modify, Block, Observe bool }
	want := map[hooks.Point]caps{
		hooks.PersonaSelected:       {true, false, false},
		hooks.PersonaEscalated:      {false, false, true},
		hooks.PersonaPromptAssembly: {true, false, false},
		hooks.WatcherCheck:          {false, false, true},
		hooks.WatcherNudge:          {true, true, false},
		hooks.WatcherEscalate:       {false, false, true},
		hooks.WatcherPause:          {false, false, true},
		hooks.WatcherAbort:          {false, false, true},
		hooks.SyncerEvaluate:        {true, false, false},
		hooks.SyncerRelay:           {true, true, false},
		hooks.SyncerDelivered:       {false, false, true},
		hooks.SyncerIgnored:         {false, false, true},
	}
	got := map[hooks.Point]caps{}
	for _, p := range hooks.Points() {
		got[p] = caps{p.CanModify(), p.CanBlock(), p.Observes()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if n := len(hooks.Points()); n != len(want) {
		t.Errorf("Points() has %d entries, want %d (a duplicate?)", n, len(want))
	}
}

func TestDecideWithoutHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	tests := []struct {
		name string
		r    func(t *testing.T) (*hooks.Runner, *recorder)
	}{
		{"none configured", func(t *testing.T) (*hooks.Runner, *recorder) { return newRunner(t, hooks.Options{}) }},
		{"only at another point", func(t *testing.T) (*hooks.Runner, *recorder) {
			return newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.WatcherNudge, Command: "touch " + sq(ran)}}})
		}},
		{"nil runner", func(t *testing.T) (*hooks.Runner, *recorder) { return nil, &recorder{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := tt.r(t)
			if r.Has(hooks.PersonaSelected) {
				t.Error("Has(PersonaSelected) = true")
			}
			d := coder()
			checked := false
			v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, func() error { checked = true; return nil })
			if v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if diff := cmp.Diff(coder(), d); diff != "" {
				t.Errorf("decision changed (-want +got):\n%s", diff)
			}
			if checked {
				t.Error("check was called with no hooks")
			}
			r.Notify(hooks.PersonaEscalated, "task-1", &d)
			r.Close()
			if exists(ran) {
				t.Error("the hook at another point ran")
			}
			checkReports(t, rec, nil)
		})
	}
}

func TestHookInput(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("CET", 3600))
	tests := []struct {
		name      string
		point     hooks.Point
		id        task.ID
		canModify bool
		canBlock  bool
	}{
		{"may modify", hooks.PersonaSelected, "task-1", true, false},
		{"may modify and block", hooks.WatcherNudge, "task-2", true, true},
		{"observes", hooks.WatcherAbort, "task-3", false, false},
		{"no task", hooks.SyncerRelay, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ready := mkfifo(t, dir, "ready")
			r, rec := newRunner(t, hooks.Options{
				Dir:   dir,
				Now:   func() time.Time { return now },
				Hooks: []hooks.Hook{{Point: tt.point, Command: "cat > in.json; echo done > ready"}},
			})
			done := readFifo(ready)
			d := coder()
			if v := r.Decide(t.Context(), tt.point, tt.id, &d, nil); v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if got := within(t, done, "hook"); got != "done\n" {
				t.Fatalf("fifo read %q", got)
			}
			r.Close()
			raw, err := os.ReadFile(filepath.Join(dir, "in.json"))
			if err != nil {
				t.Fatal(err)
			}

			var in hooks.Input
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatalf("input %s: %v", raw, err)
			}
			want := hooks.Input{
				Hook:      tt.point,
				TaskID:    tt.id,
				Time:      now.UTC(),
				Decision:  json.RawMessage(`{"persona":"coder","method":"router","tags":["go"]}`),
				CanModify: tt.canModify,
				CanBlock:  tt.canBlock,
			}
			if diff := cmp.Diff(want, in); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}

			// The wire form: snake_case keys, UTC time, task_id only when
			// there is a task.
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil {
				t.Fatal(err)
			}
			wantKeys := []string{"can_block", "can_modify", "decision", "hook", "time"}
			if tt.id != "" {
				wantKeys = append(wantKeys, "task_id")
			}
			var gotKeys []string
			for k := range keys {
				gotKeys = append(gotKeys, k)
			}
			if diff := cmp.Diff(wantKeys, gotKeys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("input keys (-want +got):\n%s", diff)
			}
			if got := string(keys["time"]); got != `"2025-01-02T02:04:05.0000006Z"` {
				t.Errorf("time = %s, want UTC", got)
			}
			if !tt.point.Observes() {
				checkReports(t, rec, nil)
			}
		})
	}
}

func TestHookEnvironment(t *testing.T) {
	t.Parallel()
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "env.txt")
	r, rec := newRunner(t, hooks.Options{
		Dir: dir,
		Env: []string{"EXTRA=extra value"},
		Hooks: []hooks.Hook{{Point: hooks.WatcherNudge,
			Command: `printf '%s|%s|%s|%s|%s' "$NEURAPHAGE_HOOK" "$NEURAPHAGE_TASK_ID" "$EXTRA" "$HOME" "$(pwd -P)" > ` + sq(out)}},
	})
	d := coder()
	if v := r.Decide(t.Context(), hooks.WatcherNudge, "task-9", &d, nil); v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "WatcherNudge|task-9|extra value|" + os.Getenv("HOME") + "|" + wd
	if string(got) != want {
		t.Errorf("environment %q, want %q", got, want)
	}
	checkReports(t, rec, nil)
}

func TestDecideModifies(t *testing.T) {
	t.Parallel()
	cmd := replying(`{"decision":{"persona":"reviewer","tags":["go","review"]},"reason":"prefers review"}`)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: cmd}}})
	d := coder()
	var seen choice
	v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, func() error { seen = d; return nil })
	if want := (hooks.Verdict{Modified: true, Reason: "prefers review"}); v != want {
		t.Errorf("Verdict = %+v, want %+v", v, want)
	}
	want := choice{Persona: "reviewer", Method: "router", Tags: []string{"go", "review"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("check saw (-want +got):\n%s", diff)
	}
	checkReports(t, rec, []report{{"task-1", event.HookActed{Point: "PersonaSelected", Command: cmd, Action: "modified", Reason: "prefers review"}}})
}

// A change that cannot be used leaves the decision as it was and is
// reported; the hooks after it still run.
func TestDecideRejectsChanges(t *testing.T) {
	t.Parallel()
	refuseGhost := func(d *choice) func() error {
		return func() error {
			if d.Persona == "ghost" {
				return errors.New(`unknown persona "ghost"`)
			}
			return nil
		}
	}
	tests := []struct {
		name  string
		reply string
		err   string
	}{
		{"field the decision lacks", `{"decision":{"persona":"reviewer","nope":1}}`, `its change was not used: the decision has no field "nope"`},
		{"wrong type", `{"decision":{"persona":"reviewer","tags":"go"}}`,
			"its change was not used: a changed field has the wrong type: json: cannot unmarshal string into Go struct field choice.tags of type []string"},
		{"refused by check", `{"decision":{"persona":"ghost","method":"hook","tags":[]}}`, `its change was not used: unknown persona "ghost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after := filepath.Join(t.TempDir(), "after.json")
			cmd := replying(tt.reply)
			r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{
				{Point: hooks.PersonaSelected, Command: cmd},
				{Point: hooks.PersonaSelected, Command: "cat > " + sq(after)},
			}})
			d := coder()
			v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, refuseGhost(&d))
			if v != (hooks.Verdict{}) {
				t.Errorf("Verdict = %+v, want zero", v)
			}
			if diff := cmp.Diff(coder(), d); diff != "" {
				t.Errorf("decision not restored (-want +got):\n%s", diff)
			}
			// The next hook saw the decision as it was.
			var in hooks.Input
			if raw, err := os.ReadFile(after); err != nil {
				t.Fatal(err)
			} else if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			if got, want := string(in.Decision), `{"persona":"coder","method":"router","tags":["go"]}`; got != want {
				t.Errorf("next hook saw %s, want %s", got, want)
			}
			checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaSelected", Command: cmd, Error: tt.err}}})
		})
	}
}

// labelled is a decision with a map field.
type labelled struct {
	Persona string            `json:"persona"`
	Labels  map[string]string `json:"labels"`
}

// A change laid over the decision replaces a field's JSON value; a refused
// change is dropped. Both must hold for map fields too.
func TestDecideMapFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		want  labelled
	}{
		{"replaced", `{"decision":{"labels":{"b":"2"}}}`, labelled{"coder", map[string]string{"b": "2"}}},
		{"refused", `{"decision":{"persona":"ghost","labels":{"b":"2"}}}`, labelled{"coder", map[string]string{"a": "1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newRunner(t, hooks.Options{Hooks: []hooks.Hook{{Point: hooks.PersonaSelected, Command: replying(tt.reply)}}})
			d := labelled{"coder", map[string]string{"a": "1"}}
			r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, func() error {
				if d.Persona == "ghost" {
					return errors.New("unknown persona")
				}
				return nil
			})
			if diff := cmp.Diff(tt.want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideBlocks(t *testing.T) {
	t.Parallel()
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := replying(`{"block":true,"reason":"too chatty"}`)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{
		{Point: hooks.WatcherNudge, Command: cmd},
		{Point: hooks.WatcherNudge, Command: "touch " + sq(ran)},
	}})
	d := coder()
	v := r.Decide(t.Context(), hooks.WatcherNudge, "task-1", &d, nil)
	if want := (hooks.Verdict{Blocked: true, Reason: "too chatty"}); v != want {
		t.Errorf("Verdict = %+v, want %+v", v, want)
	}
	if exists(ran) {
		t.Error("the hook after the blocking one ran")
	}
	if diff := cmp.Diff(coder(), d); diff != "" {
		t.Errorf("decision changed (-want +got):\n%s", diff)
	}
	checkReports(t, rec, []report{{"task-1", event.HookActed{Point: "WatcherNudge", Command: cmd, Action: "blocked", Reason: "too chatty"}}})
}

// A hook that modifies and then one that blocks: the verdict says both.
func TestDecideModifiesThenBlocks(t *testing.T) {
	t.Parallel()
	mod := replying(`{"decision":{"method":"hook"},"reason":"mine"}`)
	block := replying(`{"block":true,"reason":"not now"}`)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{
		{Point: hooks.SyncerRelay, Command: mod},
		{Point: hooks.SyncerRelay, Command: block},
	}})
	d := coder()
	v := r.Decide(t.Context(), hooks.SyncerRelay, "", &d, nil)
	if want := (hooks.Verdict{Blocked: true, Modified: true, Reason: "not now"}); v != want {
		t.Errorf("Verdict = %+v, want %+v", v, want)
	}
	if d.Method != "hook" {
		t.Errorf("Method = %q, want hook", d.Method)
	}
	checkReports(t, rec, []report{
		{"", event.HookActed{Point: "SyncerRelay", Command: mod, Action: "modified", Reason: "mine"}},
		{"", event.HookActed{Point: "SyncerRelay", Command: block, Action: "blocked", Reason: "not now"}},
	})
}

func TestDecideBlockIgnoredWhereNotAllowed(t *testing.T) {
	t.Parallel()
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := replying(`{"block":true,"reason":"no","decision":{"persona":"reviewer"}}`)
	r, rec := newRunner(t, hooks.Options{Hooks: []hooks.Hook{
		{Point: hooks.PersonaSelected, Command: cmd},
		{Point: hooks.PersonaSelected, Command: "touch " + sq(ran)},
	}})
	d := coder()
	v := r.Decide(t.Context(), hooks.PersonaSelected, "task-1", &d, nil)
	if v != (hooks.Verdict{}) {
		t.Errorf("Verdict = %+v, want zero", v)
	}
	if diff := cmp.Diff(coder(), d); diff != "" {
		t.Errorf("decision changed (-want +got):\n%s", diff)
	}
	if !exists(ran) {
		t.Error("the hook after the ignored block did not run")
	}
	checkReports(t, rec, []report{{"task-1", event.HookFailed{Point: "PersonaSelected", Command: cmd,
		Error: "replied block, which PersonaSelected does not allow; ignored"}}})
}
