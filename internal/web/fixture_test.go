package web_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/web"
)

// fixture is the daemon's API over a real SQLite store, the real tasks
// service and event bus (the executor is not started: queued tasks stay
// queued), on a Unix socket with its token, and the dashboard in front of
// it on loopback TCP.
type fixture struct {
	st   *sqlite.Store
	bus  *event.Bus
	svc  *tasks.Service
	c    *client.Client
	web  *web.Server
	srv  *httptest.Server
	git  *fakeGit
	stop context.CancelFunc
	done chan struct{}
}

func newFixture(t testing.TB, o web.Options) *fixture {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	bus := event.NewBus(event.Options{Buffer: 4096}, 0)
	t.Cleanup(bus.Close)
	st := testkit.OpenStore(t, sqlite.Options{Publish: func(evs ...event.Event) { bus.Publish(evs...) }})
	svc := tasks.New(tasks.Options{Store: st, Records: st, Personas: persona.Defaults(), Engine: "native", Logger: log, Rand: rand.Reader, Now: time.Now})
	ps := tasks.NewPersonas(persona.Defaults(), nil, func(llm.Tier) (llm.Client, string, error) { return nil, "", errString("no models here") })
	ex := executor.New(executor.Options{Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{idle{}}, Personas: ps, Logger: log})
	svc.Bind(tasks.Runtime{Runner: ex})
	g := &fakeGit{}
	apiH := server.New(server.Config{Tasks: svc, Personas: svc, Supervision: supervision{svc: svc, st: st},
		Knowledge: knowledge{st: st}, Log: st, Bus: bus, Git: g, Logger: log})
	dir, err := os.MkdirTemp("", "npweb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	if err := os.WriteFile(api.TokenPath(sock), []byte("secret-token-for-tests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	apiSrv := httptest.NewUnstartedServer(server.RequireToken(apiH, "secret-token-for-tests", api.TokenPath(sock)))
	apiSrv.Listener = ln
	apiSrv.Start()
	c := client.New(sock)
	o.Client, o.Loopback = c, true
	w := web.New(o)
	hs := httptest.NewServer(w.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{st: st, bus: bus, svc: svc, c: c, web: w, srv: hs, git: g, stop: cancel, done: make(chan struct{})}
	go func() { defer close(f.done); w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-f.done
		hs.CloseClientConnections()
		hs.Close()
		c.Close()
		apiSrv.CloseClientConnections()
		apiSrv.Close()
	})
	return f
}

// browser returns an HTTP client with a cookie jar that does not follow
// redirects.
func (f *fixture) browser(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
}

// login signs a new browser in through a one-time link.
func (f *fixture) login(t testing.TB) *http.Client {
	t.Helper()
	b := f.browser(t)
	resp, err := b.Get(f.srv.URL + f.web.Login())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	return b
}

// create makes a task and moves it to status (through the store's
// transition table, as the executor would).
func (f *fixture) create(t testing.TB, desc string, to ...task.Status) task.ID {
	t.Helper()
	id, err := f.createErr(desc, to...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type idle struct{}

func (idle) Name() string { return "native" }
func (idle) Ready() error { return nil }
func (idle) Run(context.Context, engine.Run) engine.Outcome {
	return engine.Outcome{Status: engine.Failed, Reason: "not run in these tests"}
}

// supervision serves the Watcher's diagnoses from the event log and nudges
// through the tasks service, as the daemon's does.
type supervision struct {
	svc *tasks.Service
	st  *sqlite.Store
}

func (supervision) Health(context.Context, string) ([]supervise.Health, error) { return nil, nil }
func (s supervision) Diagnoses(ctx context.Context, _ string, limit int) ([]event.Event, error) {
	return s.st.ReadEvents(ctx, event.Query{Filter: event.Filter{Kinds: []string{"watcher"}}, Limit: limit})
}
func (supervision) Stats(context.Context) (supervise.Stats, *syncer.Stats, error) {
	return supervise.Stats{}, nil, nil
}
func (s supervision) Nudge(ctx context.Context, ref, text string) (inject.Injection, error) {
	id, err := s.svc.Resolve(ctx, ref)
	if err != nil {
		return inject.Injection{}, err
	}
	return s.svc.Nudge(ctx, id, text)
}

type knowledge struct{ st *sqlite.Store }

func (knowledge) Learnings(context.Context, string, string, int) ([]store.Learning, error) {
	return nil, nil
}
func (knowledge) Learning(context.Context, int64) (store.Learning, []store.SyncMessage, error) {
	return store.Learning{}, nil, store.ErrNotFound
}
func (knowledge) Forget(context.Context, int64) (store.Learning, error) {
	return store.Learning{}, store.ErrNotFound
}
func (k knowledge) SyncMessages(ctx context.Context, _ string, limit int) ([]store.SyncMessage, error) {
	return k.st.SyncMessages(ctx, store.SyncQuery{Limit: limit})
}

// fakeGit is the merge queue with one parked entry; it records retries.
type fakeGit struct {
	server.Git
	mu      sync.Mutex
	parked  task.ID
	retried []string
}

func (g *fakeGit) Worktree(context.Context, string) (api.Worktree, error) {
	return api.Worktree{}, &server.RefusedError{Err: errNoWorktree}
}
func (g *fakeGit) RebaseStatus(context.Context) (api.RebaseStatus, error) {
	return api.RebaseStatus{}, nil
}
func (g *fakeGit) MergeStatus(context.Context, int) (api.MergeStatus, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.parked == "" {
		return api.MergeStatus{}, nil
	}
	return api.MergeStatus{Recent: []api.MergeEntry{{ID: 7, TaskID: g.parked, State: api.MergeParked, Target: "main", Attempts: 2, Detail: "the gate failed: <b>make test</b>"}}}, nil
}
func (g *fakeGit) MergeRetry(_ context.Context, ref string) (api.MergeEntry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retried = append(g.retried, ref)
	return api.MergeEntry{ID: 8, TaskID: task.ID(ref), State: api.MergeQueued, Target: "main"}, nil
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoWorktree = errString("the task has no worktree")

// body reads a response's body as a string.
func body(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
