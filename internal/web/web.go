// Package web is the daemon's web dashboard: server-rendered html/template
// pages (the fleet with the tasks that need the user first, a task's live
// conversation, the Watcher's diagnoses, the Syncer's messages, a task's
// worktree diff, the merge queue) and their actions, kept live over
// Server-Sent Events fed by one watch stream. It is a client of the
// daemon's API (api/client), like the CLI and the TUI: every action goes
// through the same routes they use.
//
// Safety: a one-time login token (printed by `neuraphage web`) is exchanged
// for an HttpOnly, SameSite=Strict session cookie; every POST carries the
// session's CSRF token; actions are rate limited per session; pages carry a
// strict Content-Security-Policy (scripts only from the dashboard itself),
// X-Frame-Options DENY and nosniff; on loopback the Host header must name
// the loopback interface (against DNS rebinding). The only script is htmx,
// vendored under its licence, and the dashboard's own app.js (go:embed).
package web

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

//go:embed static
var staticFS embed.FS

// Options configures a Server.
type Options struct {
	// Client reaches the daemon's API.
	Client *client.Client
	Logger *slog.Logger
	// Loopback makes the server check the Host header of every request
	// against the loopback names (DNS rebinding).
	Loopback bool
	// Secure marks the session cookie Secure (the server speaks TLS).
	Secure bool
	// ActionBurst and ActionsPerMinute are each session's token bucket
	// for actions; zero means 20 and 60.
	ActionBurst      int
	ActionsPerMinute int
	// Now is the clock of sessions and rate limits; nil means time.Now.
	Now func() time.Time
	// Metrics, when set, is served at GET /metrics (Prometheus text) to a
	// signed-in browser or to a scraper sending "Authorization: Bearer"
	// with MetricsToken (the daemon's API token).
	Metrics      http.Handler
	MetricsToken string
}

// Server is the dashboard: its handler, its sessions and the live hub.
type Server struct {
	o    Options
	c    *client.Client
	log  *slog.Logger
	auth *sessions
	hub  *hub
	tpl  *templates
	mux  *http.ServeMux
}

// New returns a Server; call Run to make its pages live.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ActionBurst <= 0 {
		o.ActionBurst = 20
	}
	if o.ActionsPerMinute <= 0 {
		o.ActionsPerMinute = 60
	}
	s := &Server{o: o, c: o.Client, log: o.Logger, tpl: parseTemplates()}
	s.auth = newSessions(o.Now, float64(o.ActionBurst), float64(o.ActionsPerMinute)/60)
	s.hub = newHub(o.Client, s.tpl, o.Logger)
	s.routes()
	return s
}

// Login mints a one-time login token and returns the path that exchanges
// it for a session ("/login?token=…").
func (s *Server) Login() string { return "/login?token=" + s.auth.mint() }

// Rotate ends every session and forgets every unused login token.
func (s *Server) Rotate() { s.auth.rotate() }

// Run follows the daemon's watch stream and feeds the live pages until ctx
// ends; it reconnects when the stream breaks.
func (s *Server) Run(ctx context.Context) error { return s.hub.run(ctx) }

// Handler is the dashboard with its security layers.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	m.HandleFunc("GET /login", s.login)
	m.HandleFunc("GET /{$}", s.authed(s.fleetPage))
	m.HandleFunc("GET /tasks/{id}", s.authed(s.taskPage))
	m.HandleFunc("GET /tasks/{id}/diff", s.authed(s.diffPage))
	m.HandleFunc("GET /diagnoses", s.authed(s.diagnosesPage))
	m.HandleFunc("GET /sync", s.authed(s.syncPage))
	m.HandleFunc("GET /merge", s.authed(s.mergePage))
	m.HandleFunc("GET /events", s.authed(s.events))
	m.HandleFunc("POST /tasks/{id}/{action}", s.authed(s.action))
	m.HandleFunc("POST /logout", s.authed(s.logout))
	if s.o.Metrics != nil {
		m.Handle("GET /metrics", s.metrics(s.o.Metrics))
	}
	s.mux = m
}

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}
