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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// fakeKnowledge holds one learning, #7, and one message relaying it, and
// records what it was asked.
type fakeKnowledge struct {
	mu    sync.Mutex
	calls []string // guarded by mu
}

var (
	delivered       = t0.Add(3 * time.Second)
	sampleSyncMsg   = api.SyncMessage{ID: 3, LearningID: 7, From: "t-4k2x9", To: "t-ui000", Urgency: "blocking", Relevance: "high", Score: 0.8, Message: "tokens need an iat claim", Reason: "shared tags: auth", DecidedBy: "persona", State: "delivered", InjectionID: 11, CreatedAt: t0, DeliveredAt: &delivered}
	sampleLearning  = api.Learning{ID: 7, Kind: "error-resolution", Summary: "the JWT library rejects tokens without an iat claim", Tags: []string{"auth", "jwt"}, Files: []string{"auth/jwt.go"}, Sources: []api.LearningSource{{TaskID: "t-4k2x9", Kind: "error-resolution", At: t0}}, CreatedAt: t0, UpdatedAt: t0}
	relayedLearning = func() api.Learning { l := sampleLearning; l.Relayed = []api.SyncMessage{sampleSyncMsg}; return l }()
	// What the Knowledge returns: the samples' domain forms.
	storeSyncMsg  = store.SyncMessage{ID: 3, LearningID: 7, From: "t-4k2x9", TaskID: "t-ui000", Urgency: "blocking", Relevance: "high", Score: 0.8, Message: "tokens need an iat claim", Reason: "shared tags: auth", DecidedBy: "persona", State: store.SyncDelivered, InjectionID: 11, CreatedAt: t0, DeliveredAt: &delivered}
	storeLearning = store.Learning{ID: 7, TaskID: "t-4k2x9", Kind: "error-resolution", Summary: "the JWT library rejects tokens without an iat claim", Tags: []string{"auth", "jwt"}, Files: []string{"auth/jwt.go"}, Sources: []store.LearningSource{{TaskID: "t-4k2x9", Kind: "error-resolution", At: t0}}, CreatedAt: t0, UpdatedAt: t0}
)

func (f *fakeKnowledge) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeKnowledge) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeKnowledge) Learnings(_ context.Context, search, ref string, limit int) ([]store.Learning, error) {
	f.record(fmt.Sprintf("learnings %q %s %d", search, ref, limit))
	if search == "nothing" {
		return nil, nil
	}
	return []store.Learning{storeLearning}, nil
}

func (f *fakeKnowledge) Learning(_ context.Context, id int64) (store.Learning, []store.SyncMessage, error) {
	f.record(fmt.Sprintf("learning %d", id))
	if id != 7 {
		return store.Learning{}, nil, fmt.Errorf("learning %d: %w", id, store.ErrNotFound)
	}
	return storeLearning, []store.SyncMessage{storeSyncMsg}, nil
}

func (f *fakeKnowledge) Forget(_ context.Context, id int64) (store.Learning, error) {
	f.record(fmt.Sprintf("forget %d", id))
	if id != 7 {
		return store.Learning{}, fmt.Errorf("learning %d: %w", id, store.ErrNotFound)
	}
	return storeLearning, nil
}

func (f *fakeKnowledge) SyncMessages(_ context.Context, ref string, limit int) ([]store.SyncMessage, error) {
	f.record(fmt.Sprintf("messages %s %d", ref, limit))
	if ref == "t-done00" {
		return nil, nil
	}
	return []store.SyncMessage{storeSyncMsg}, nil
}

var _ server.Knowledge = (*fakeKnowledge)(nil)

func newKnowing(k server.Knowledge) *server.Server {
	return server.New(server.Config{Tasks: doneTasks{newFake()}, Knowledge: k, Logger: slog.New(slog.DiscardHandler)})
}

// serveKnowing runs a server with k on a Unix socket and returns a client
// for it.
func serveKnowing(t *testing.T, k server.Knowledge) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(newKnowing(k))
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	c := client.New(sock)
	t.Cleanup(c.Close)
	return c
}

func TestKnowledgeThroughTheClient(t *testing.T) {
	t.Parallel()
	f := &fakeKnowledge{}
	c := serveKnowing(t, f)
	ctx := context.Background()

	ls, err := c.Learnings(ctx, "jwt iat", "4k2", 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.Learning{sampleLearning}, ls); diff != "" {
		t.Errorf("Learnings (-want +got):\n%s", diff)
	}
	if ls, err = c.Learnings(ctx, "", "", 0); err != nil || len(ls) != 1 {
		t.Errorf("Learnings(all) = %v, %v", ls, err)
	}
	l, err := c.Learning(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(relayedLearning, l); diff != "" {
		t.Errorf("Learning (-want +got):\n%s", diff)
	}
	l, err = c.Forget(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleLearning, l); diff != "" {
		t.Errorf("Forget (-want +got):\n%s", diff)
	}
	ms, err := c.SyncMessages(ctx, "4k2x", 20)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.SyncMessage{sampleSyncMsg}, ms); diff != "" {
		t.Errorf("SyncMessages (-want +got):\n%s", diff)
	}
	if _, err := c.SyncMessages(ctx, "", 0); err != nil {
		t.Fatal(err)
	}

	// References are resolved before the Knowledge is asked.
	want := []string{`learnings "jwt iat" t-4k2x9 5`, `learnings ""  0`, "learning 7", "forget 7", "messages t-4k2x9 20", "messages  0"}
	if diff := cmp.Diff(want, f.asked()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestKnowledgeAnswersEmptyLists(t *testing.T) {
	t.Parallel()
	srv := newKnowing(&fakeKnowledge{})
	for _, path := range []string{"/v1/knowledge?q=nothing", "/v1/sync/messages?task=done"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != "[]" {
			t.Errorf("%s: %d %s; want 200 with []", path, rec.Code, rec.Body)
		}
	}
}

func TestKnowledgeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path string
		status             int
		code               api.ErrorCode
		msg, hint          string // parts of the message and hint
	}{
		{"unknown learning", "GET", "/v1/knowledge/8", 404, api.CodeNotFound, "learning 8: not found", "`neuraphage knowledge list`"},
		{"forget unknown learning", "DELETE", "/v1/knowledge/8", 404, api.CodeNotFound, "learning 8: not found", "`neuraphage knowledge list`"},
		{"id not a number", "GET", "/v1/knowledge/x7", 400, api.CodeInvalid, `id must be a learning's number, e.g. 12, got "x7"`, ""},
		{"forget id not a number", "DELETE", "/v1/knowledge/x7", 400, api.CodeInvalid, "id must be a learning's number", ""},
		{"zero id", "GET", "/v1/knowledge/0", 400, api.CodeInvalid, "id must be a learning's number", ""},
		{"negative id", "GET", "/v1/knowledge/-7", 400, api.CodeInvalid, "id must be a learning's number", ""},
		{"limit not a number", "GET", "/v1/knowledge?limit=x", 400, api.CodeInvalid, `limit must be a non-negative number of learnings, got "x"`, ""},
		{"negative limit", "GET", "/v1/knowledge?limit=-1", 400, api.CodeInvalid, "limit must be a non-negative number", ""},
		{"messages limit not a number", "GET", "/v1/sync/messages?limit=ten", 400, api.CodeInvalid, `limit must be a non-negative number of messages, got "ten"`, ""},
		{"messages negative limit", "GET", "/v1/sync/messages?limit=-5", 400, api.CodeInvalid, "limit must be a non-negative number", ""},
		{"unknown task learnings", "GET", "/v1/knowledge?task=zzz", 404, api.CodeNotFound, "not found", "`neuraphage task list --all`"},
		{"unknown task messages", "GET", "/v1/sync/messages?task=zzz", 404, api.CodeNotFound, "not found", "`neuraphage task list --all`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeKnowledge{}
			rec := httptest.NewRecorder()
			newKnowing(f).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("decoding %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) || !strings.Contains(e.Hint, tt.hint) {
				t.Errorf("answer %d %+v; want %d %s with %q, hint %q", rec.Code, e, tt.status, tt.code, tt.msg, tt.hint)
			}
			// A bad request is refused before the Knowledge is asked.
			if tt.status == 400 && len(f.asked()) > 0 {
				t.Errorf("asked %v", f.asked())
			}
		})
	}
}

// TestKnowledgeUnavailable: a daemon without a Knowledge answers every
// knowledge route 503, before parsing an id or resolving a task.
func TestKnowledgeUnavailable(t *testing.T) {
	t.Parallel()
	c := serveKnowing(t, nil)
	ctx := context.Background()
	calls := map[string]func() error{
		"learnings": func() error { _, err := c.Learnings(ctx, "jwt", "zzz", 3); return err },
		"learning":  func() error { _, err := c.Learning(ctx, 7); return err },
		"forget":    func() error { _, err := c.Forget(ctx, 7); return err },
		"messages":  func() error { _, err := c.SyncMessages(ctx, "zzz", 0); return err },
	}
	for name, call := range calls {
		var ce *client.Error
		err := call()
		if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || ce.Code() != api.CodeUnavailable ||
			!strings.Contains(ce.Body.Message, "the knowledge store is not served") || ce.Body.Hint == "" {
			t.Errorf("%s: %v; want 503 unavailable with a hint", name, err)
		}
	}
	rec := httptest.NewRecorder()
	newKnowing(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/knowledge/x", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("bad id without a Knowledge: %d %s; want 503", rec.Code, rec.Body)
	}
}

// TestKnowledgeTaskIsResolved: a task reference of the knowledge routes is
// a prefix, as everywhere.
func TestKnowledgeTaskIsResolved(t *testing.T) {
	t.Parallel()
	f := &fakeKnowledge{}
	srv := newKnowing(f)
	for _, path := range []string{"/v1/knowledge?task=t-4k", "/v1/sync/messages?task=4k2x9&limit=0"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	want := []string{`learnings "" t-4k2x9 0`, "messages t-4k2x9 0"}
	if diff := cmp.Diff(want, f.asked()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
