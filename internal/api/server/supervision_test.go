package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// fakeSupervision answers from fixed data and records what it was asked.
// A nudge to "t-done00" is refused as a finished task's would be.
type fakeSupervision struct {
	mu    sync.Mutex
	calls []string // guarded by mu
}

var (
	sampleEvidence = []event.Evidence{
		{Step: 4, Kind: "result", Tool: "bash", What: `bash {"command":"go test ./..."} → error: FAIL`, Exact: true},
		{Step: 6, Kind: "result", Tool: "bash", What: `bash {"command":"go test ./..."} → error: FAIL`, Exact: true},
	}
	sampleHealth = api.TaskHealth{TaskID: "t-4k2x9", State: "running", Status: "stuck", Activity: "waiting on model 95 s, attempt 2 of 5",
		Model:      &api.ModelCall{Turn: 7, Since: t0, WaitingSecs: 95, Attempt: 2, MaxAttempts: 5, LastError: "timeout: stream idle"},
		Confidence: 0.9, Check: "failing", Tier: 1,
		Diagnosis: "the same call failed 3 times in a row", Ladder: "hint", Unheeded: 1, LastCheck: t0, Steps: 6,
		StepsSinceProgress: 4, TokensSinceProgress: 1200, USDSinceProgress: 0.01, LastProgress: t0, Evidence: sampleEvidence}
	sampleDomainHealth = supervise.Health{TaskID: "t-4k2x9", State: "running", Status: "stuck", Activity: "waiting on model 95 s, attempt 2 of 5",
		Model:      &supervise.ModelCall{Turn: 7, Since: t0, WaitingSecs: 95, Attempt: 2, MaxAttempts: 5, LastError: "timeout: stream idle"},
		Confidence: 0.9, Check: "failing", Tier: 1,
		Diagnosis: "the same call failed 3 times in a row", Ladder: "hint", Unheeded: 1, LastCheck: t0, Steps: 6,
		StepsSinceProgress: 4, TokensSinceProgress: 1200, USDSinceProgress: 0.01, LastProgress: t0, Evidence: sampleEvidence}
	sampleDiagnosis = event.Event{ID: 12, Time: t0, Kind: event.KindHealthCheck, TaskID: "t-4k2x9",
		Payload: event.HealthCheck{Status: "stuck", Confidence: 0.9, Check: "failing", Tier: 1, Ladder: "hint", Step: 6, Evidence: sampleEvidence}}
	sampleStats = api.SupervisionStats{Enabled: true, Running: true, Started: t0, Cycles: 40, Observations: 300, Watched: 2,
		Tier1: map[string]uint64{"failing": 2}, Nudges: 1}
)

func (f *fakeSupervision) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeSupervision) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeSupervision) Health(_ context.Context, ref string) ([]supervise.Health, error) {
	f.record("health " + ref)
	if ref == "" {
		return []supervise.Health{sampleDomainHealth, {TaskID: "t-other", Status: "unsupervised", Ladder: "none"}}, nil
	}
	return []supervise.Health{sampleDomainHealth}, nil
}

func (f *fakeSupervision) Diagnoses(_ context.Context, ref string, limit int) ([]event.Event, error) {
	f.record(fmt.Sprintf("diagnoses %s %d", ref, limit))
	if ref == "t-4k2x9" || ref == "" {
		return []event.Event{sampleDiagnosis}, nil
	}
	return nil, nil
}

func (f *fakeSupervision) Stats(context.Context) (supervise.Stats, *syncer.Stats, error) {
	f.record("stats")
	s := sampleStats
	return supervise.Stats{Enabled: s.Enabled, Running: s.Running, Started: s.Started, Cycles: s.Cycles,
		Observations: s.Observations, Watched: s.Watched, Tier1: s.Tier1, Nudges: s.Nudges}, nil, nil
}

func (f *fakeSupervision) Nudge(_ context.Context, ref, text string) (inject.Injection, error) {
	f.record("nudge " + ref + " " + text)
	if ref == "t-done00" {
		return inject.Injection{}, &task.FinishedError{ID: "t-done00", Status: task.Completed}
	}
	return inject.Injection{ID: 9, TaskID: task.ID(ref), Source: "user", Kind: "nudge", Text: text, CreatedAt: t0}, nil
}

var _ server.Supervision = (*fakeSupervision)(nil)

// doneTasks is fakeTasks knowing one more task, t-done00, which has finished.
type doneTasks struct{ *fakeTasks }

func (d doneTasks) Resolve(ctx context.Context, ref string) (task.ID, error) {
	if ref == "done" || ref == "t-done00" {
		return "t-done00", nil
	}
	return d.fakeTasks.Resolve(ctx, ref)
}

func newSupervised(sup server.Supervision) *server.Server {
	return server.New(server.Config{Tasks: doneTasks{newFake()}, Supervision: sup, Logger: slog.New(slog.DiscardHandler)})
}

// serveSupervised runs a server with sup on a Unix socket and returns a
// client for it.
func serveSupervised(t *testing.T, sup server.Supervision) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(newSupervised(sup))
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	c := client.New(sock)
	t.Cleanup(c.Close)
	return c
}

func TestSupervisionThroughTheClient(t *testing.T) {
	t.Parallel()
	f := &fakeSupervision{}
	c := serveSupervised(t, f)
	ctx := context.Background()

	all, err := c.SupervisionHealth(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.TaskHealth{sampleHealth, {TaskID: "t-other", Status: "unsupervised", Ladder: "none"}}, all); diff != "" {
		t.Errorf("SupervisionHealth(all) (-want +got):\n%s", diff)
	}
	one, err := c.SupervisionHealth(ctx, "4k")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.TaskHealth{sampleHealth}, one); diff != "" {
		t.Errorf("SupervisionHealth(4k) (-want +got):\n%s", diff)
	}

	evs, err := c.Diagnoses(ctx, "4k2", 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]event.Event{sampleDiagnosis}, evs); diff != "" {
		t.Errorf("Diagnoses (-want +got):\n%s", diff)
	}
	if _, err := c.Diagnoses(ctx, "", 0); err != nil {
		t.Fatal(err)
	}

	st, err := c.SupervisionStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleStats, st); diff != "" {
		t.Errorf("SupervisionStats (-want +got):\n%s", diff)
	}

	m, err := c.Nudge(ctx, "4k2x", "run the failing test alone first")
	if err != nil {
		t.Fatal(err)
	}
	want := api.Message{ID: 9, TaskID: "t-4k2x9", Source: "user", Kind: "nudge", Text: "run the failing test alone first", CreatedAt: t0}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("Nudge (-want +got):\n%s", diff)
	}

	// References are resolved before the Supervision is asked.
	wantCalls := []string{"health ", "health t-4k2x9", "diagnoses t-4k2x9 5", "diagnoses  0", "stats", "nudge t-4k2x9 run the failing test alone first"}
	if diff := cmp.Diff(wantCalls, f.asked()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestSupervisionAnswersEmptyListsAndMaps(t *testing.T) {
	t.Parallel()
	srv := newSupervised(emptySupervision{})
	for path, want := range map[string]string{
		"/v1/supervision/health":    `"tasks":[]`,
		"/v1/supervision/diagnoses": `"events":[]`,
		"/v1/supervision/stats":     `"tier1":{}`,
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: %d %s; want 200 with %s", path, rec.Code, rec.Body, want)
		}
	}
}

// emptySupervision watches nothing.
type emptySupervision struct{}

func (emptySupervision) Health(context.Context, string) ([]supervise.Health, error) { return nil, nil }
func (emptySupervision) Diagnoses(context.Context, string, int) ([]event.Event, error) {
	return nil, nil
}
func (emptySupervision) Stats(context.Context) (supervise.Stats, *syncer.Stats, error) {
	return supervise.Stats{}, nil, nil
}
func (emptySupervision) Nudge(context.Context, string, string) (inject.Injection, error) {
	return inject.Injection{}, errors.New("not reached")
}

func TestSupervisionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     api.ErrorCode
		msg                      string // a part of the message
	}{
		{"unknown task health", "GET", "/v1/supervision/health?task=zzz", "", 404, api.CodeNotFound, "not found"},
		{"unknown task diagnoses", "GET", "/v1/supervision/diagnoses?task=zzz", "", 404, api.CodeNotFound, "not found"},
		{"limit not a number", "GET", "/v1/supervision/diagnoses?limit=x", "", 400, api.CodeInvalid, `limit must be a positive number of events, got "x"`},
		{"zero limit", "GET", "/v1/supervision/diagnoses?limit=0", "", 400, api.CodeInvalid, "limit must be a positive number"},
		{"negative limit", "GET", "/v1/supervision/diagnoses?limit=-3", "", 400, api.CodeInvalid, "limit must be a positive number"},
		{"empty nudge", "POST", "/v1/tasks/4k2/nudge", `{"text":"  "}`, 400, api.CodeInvalid, "text must not be empty"},
		{"no body", "POST", "/v1/tasks/4k2/nudge", ``, 400, api.CodeInvalid, "reading the request body"},
		{"unknown field", "POST", "/v1/tasks/4k2/nudge", `{"txt":"x"}`, 400, api.CodeInvalid, "unknown field"},
		{"unknown task nudge", "POST", "/v1/tasks/zzz/nudge", `{"text":"x"}`, 404, api.CodeNotFound, "not found"},
		{"finished task nudge", "POST", "/v1/tasks/done/nudge", `{"text":"x"}`, 409, api.CodeConflict, "takes no more messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			newSupervised(&fakeSupervision{}).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("decoding %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("answer %d %+v; want %d %s with %q", rec.Code, e, tt.status, tt.code, tt.msg)
			}
		})
	}
}

// TestSupervisionUnavailable: a daemon without a Supervision answers every
// Watcher route 503, before reading a body or resolving a task.
func TestSupervisionUnavailable(t *testing.T) {
	t.Parallel()
	c := serveSupervised(t, nil)
	ctx := context.Background()
	calls := map[string]func() error{
		"health":    func() error { _, err := c.SupervisionHealth(ctx, "zzz"); return err },
		"diagnoses": func() error { _, err := c.Diagnoses(ctx, "", 3); return err },
		"stats":     func() error { _, err := c.SupervisionStats(ctx); return err },
		"nudge":     func() error { _, err := c.Nudge(ctx, "4k2", "x"); return err },
	}
	for name, call := range calls {
		var ce *client.Error
		err := call()
		if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || ce.Code() != api.CodeUnavailable ||
			!strings.Contains(ce.Body.Message, "supervision is not served") || ce.Body.Hint == "" {
			t.Errorf("%s: %v; want 503 unavailable with a hint", name, err)
		}
	}
}

// The wire form carries every field of the Watcher's view: the sample sets
// them all, and the two types have as many fields.
func TestTaskHealthCarriesEveryField(t *testing.T) {
	t.Parallel()
	d, w := reflect.ValueOf(sampleDomainHealth), reflect.ValueOf(sampleHealth)
	if d.NumField() != w.NumField() {
		t.Fatalf("supervise.Health has %d fields, api.TaskHealth %d", d.NumField(), w.NumField())
	}
	for i := range d.NumField() {
		if d.Field(i).IsZero() {
			t.Errorf("the sample leaves supervise.Health.%s unset", d.Type().Field(i).Name)
		}
	}
}
