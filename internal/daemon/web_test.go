package daemon_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
)

// startWith runs a daemon with cfg under a new home until the test ends.
func startWith(t *testing.T, cfg config.Config) *client.Client {
	t.Helper()
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return shortTemp(t)
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, ready := make(chan error, 1), make(chan struct{})
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Paths: p, Config: cfg, Version: "test", Logger: slog.New(slog.DiscardHandler), Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("daemon did not start: %v", err)
	}
	c := client.New(p.Socket)
	t.Cleanup(func() {
		cancel()
		c.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon stopped with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	return c
}

// TestWebOnDemand: without web.enabled the dashboard starts on the first
// POST /v1/web, once; its sign-in link works once; rotation ends sessions.
func TestWebOnDemand(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Web.Listen = "127.0.0.1:0"
	c := startWith(t, cfg)
	ctx := context.Background()
	l, err := c.Web(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Started || !strings.HasPrefix(l.URL, "http://127.0.0.1:") || !strings.HasPrefix(l.LoginURL, l.URL+"/login?token=") {
		t.Fatalf("first open: %+v", l)
	}
	again, err := c.Web(ctx, false)
	if err != nil || again.Started || again.URL != l.URL || again.LoginURL == l.LoginURL {
		t.Fatalf("second open: %+v, %v; want the same server and a new link", again, err)
	}
	b := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	resp, err := b.Get(l.LoginURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("sign-in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	page := func() int {
		req, _ := http.NewRequest(http.MethodGet, l.URL+"/", nil)
		req.AddCookie(cookie)
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := page(); code != http.StatusOK {
		t.Errorf("the fleet with the session: %d", code)
	}
	// /metrics is beside the dashboard: for a signed-in browser, a scraper
	// with the API token, nobody else.
	scrape := func(cookie *http.Cookie, bearer string) int {
		req, _ := http.NewRequest(http.MethodGet, l.URL+"/metrics", nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("/metrics Content-Type %q", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode
	}
	token, err := os.ReadFile(api.TokenPath(c.Socket()))
	if err != nil {
		t.Fatal(err)
	}
	if a, b2, n := scrape(cookie, ""), scrape(nil, strings.TrimSpace(string(token))), scrape(nil, "wrong"); a != 200 || b2 != 200 || n != 401 {
		t.Errorf("/metrics: signed in %d, API token %d, wrong token %d; want 200, 200, 401", a, b2, n)
	}
	if _, err := c.Web(ctx, true); err != nil {
		t.Fatal(err)
	}
	if code := page(); code != http.StatusUnauthorized {
		t.Errorf("the fleet after rotation: %d, want 401", code)
	}
}

// TestWebRefusesOpenAddressWithoutTLS: a daemon told to serve the
// dashboard off loopback without TLS files stops with what to do, rather
// than serve it in the clear.
func TestWebRefusesOpenAddressWithoutTLS(t *testing.T) {
	t.Parallel()
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return shortTemp(t)
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Web = config.Web{Enabled: true, Listen: "0.0.0.0:0"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = daemon.Run(ctx, daemon.Options{Paths: p, Config: cfg, Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "web.tls_cert") || ctx.Err() != nil {
		t.Fatalf("daemon with web.listen 0.0.0.0 and no TLS: %v", err)
	}
}
