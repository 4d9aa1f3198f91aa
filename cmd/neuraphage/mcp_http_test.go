package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer sends each request with a bearer token.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// unixHTTP is an HTTP client of the daemon's socket sending token.
func unixHTTP(socket, token string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	return &http.Client{Transport: bearer{token: token, next: tr}}
}

// connectHTTP connects the SDK's client to endpoint with hc.
func connectHTTP(t *testing.T, ctx context.Context, endpoint string, hc *http.Client) (*mcpSession, error) {
	t.Helper()
	s := &mcpSession{t: t, tools: map[string]*mcp.Tool{}, inputs: map[string]*jsonschema.Resolved{}, outputs: map[string]*jsonschema.Resolved{}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	return s, nil
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func readToken(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// checkMCPOverSocket: the daemon serves the same tools over streamable HTTP
// at /mcp on its socket, behind its API token.
func checkMCPOverSocket(t *testing.T, ctx context.Context, home string, wantTasks int) {
	t.Helper()
	run := filepath.Join(home, "run")
	socket := filepath.Join(run, "neuraphage.sock")
	s, err := connectHTTP(t, ctx, "http://neuraphage/mcp", unixHTTP(socket, readToken(t, filepath.Join(run, "api.token"))))
	if err != nil {
		t.Fatalf("connecting over the socket: %v", err)
	}
	s.listTools(ctx)
	var l struct {
		Tasks []taskRef `json:"tasks"`
	}
	s.call(ctx, "list_tasks", map[string]any{"all": true}, &l)
	if len(l.Tasks) != wantTasks {
		t.Errorf("list_tasks over the socket: %d tasks, want %d", len(l.Tasks), wantTasks)
	}
	if _, err := connectHTTP(t, ctx, "http://neuraphage/mcp", unixHTTP(socket, "wrong")); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connecting with a wrong token: %v, want Unauthorized", err)
	}
}

// TestMCPOverTCP: with mcp.listen set, the daemon serves /mcp on loopback
// TCP to clients sending the token of mcp.token_file, and to no one else.
func TestMCPOverTCP(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	home := filepath.Join(work, "h")
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A free port: taken by another process in between, the daemon fails
	// to start and says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf("mcp:\n  listen: %q\n", addr)
	if err := os.WriteFile(filepath.Join(home, "config", "neuraphage.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "NEURAPHAGE_HOME="+home, "HOME="+work, "XDG_RUNTIME_DIR=", "GORACE=atexit_sleep_ms=0")
	t.Cleanup(func() { stopDaemon(t, filepath.Join(home, "run", "daemon.pid")) })
	cmd := exec.Command("neuraphage", "daemon", "start")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("daemon start: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	token := readToken(t, filepath.Join(home, "data", "mcp.token"))
	s, err := connectHTTP(t, ctx, "http://"+addr+"/mcp", &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
	if err != nil {
		t.Fatalf("connecting over TCP: %v", err)
	}
	s.listTools(ctx)
	var l struct {
		Tasks []taskRef `json:"tasks"`
	}
	s.call(ctx, "list_tasks", map[string]any{"all": true}, &l)
	if len(l.Tasks) != 0 {
		t.Errorf("list_tasks over TCP = %+v, want none", l.Tasks)
	}
	for _, bad := range []string{"", "wrong", readToken(t, filepath.Join(home, "run", "api.token"))} {
		if _, err := connectHTTP(t, ctx, "http://"+addr+"/mcp", &http.Client{Transport: bearer{token: bad, next: http.DefaultTransport}}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("connecting over TCP with token %q: %v, want Unauthorized", bad, err)
		}
	}
	// Only /mcp is served over TCP, not the daemon's API.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/tasks over TCP: %s, want 404", resp.Status)
	}
}
