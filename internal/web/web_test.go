package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/web"
)

var csrfRE = regexp.MustCompile(`X-CSRF-Token[^0-9a-f]*([0-9a-f]{64})`)

// get fetches path and returns the status and body.
func get(t testing.TB, b *http.Client, f *fixture, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := b.Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body(t, resp), resp.Header
}

// csrf reads the session's CSRF token from a page.
func csrf(t testing.TB, b *http.Client, f *fixture) string {
	t.Helper()
	_, page, _ := get(t, b, f, "/")
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the fleet page carries no CSRF token:\n%s", page)
	}
	return m[1]
}

// post runs an action as htmx does, with token as the CSRF header.
func post(t testing.TB, b *http.Client, f *fixture, path, token string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	if token != "" {
		req.Header.Set("X-CSRF-Token", token)
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body(t, resp)
}

var pagePaths = []string{"/", "/tasks/%s", "/tasks/%s/diff", "/diagnoses", "/sync", "/merge", "/events"}

func paths(id task.ID) []string {
	out := make([]string, len(pagePaths))
	for i, p := range pagePaths {
		out[i] = strings.ReplaceAll(p, "%s", string(id))
	}
	return out
}

// TestAuthRequired: no page, stream or action answers without a session;
// a login link works once and leaves the address bar.
func TestAuthRequired(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	id := f.create(t, "a task")
	anon := f.browser(t)
	for _, p := range paths(id) {
		if code, page, _ := get(t, anon, f, p); code != http.StatusUnauthorized || !strings.Contains(page, "neuraphage web") {
			t.Errorf("GET %s without a session: %d, want 401 with how to sign in", p, code)
		}
	}
	if code, _ := post(t, anon, f, "/tasks/"+string(id)+"/pause", "", nil); code != http.StatusUnauthorized {
		t.Errorf("POST pause without a session: %d, want 401", code)
	}
	link := f.web.Login()
	resp, err := anon.Get(f.srv.URL + link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %d to %q, want 303 to / (the token leaves the URL)", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/", cookie)
	}
	if code, page, _ := get(t, anon, f, "/"); code != http.StatusOK || !strings.Contains(page, string(id)) {
		t.Errorf("the fleet after login: %d\n%s", code, page)
	}
	// The link is spent: another browser cannot use it.
	other := f.browser(t)
	if code, _, _ := get(t, other, f, link); code != http.StatusUnauthorized {
		t.Errorf("a second use of the login link: %d, want 401", code)
	}
	// Rotation signs every browser out.
	f.web.Rotate()
	if code, _, _ := get(t, anon, f, "/"); code != http.StatusUnauthorized {
		t.Errorf("the fleet after rotation: %d, want 401", code)
	}
}

// TestSecurityHeaders: every answer carries a strict CSP (scripts from the
// dashboard only), DENY framing and nosniff; pages hold no inline script;
// on loopback a foreign Host (DNS rebinding) is refused.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	id := f.create(t, "a task")
	b := f.login(t)
	inline := regexp.MustCompile(`<script(?:\s+[^>]*)?>`)
	for _, p := range append(paths(id)[:6], "/static/htmx.min.js", "/static/app.js", "/login") {
		_, page, h := get(t, b, f, p)
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q", p, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"))
		}
		if strings.HasSuffix(p, ".js") {
			continue
		}
		for _, tag := range inline.FindAllString(page, -1) {
			if !strings.Contains(tag, `src="/static/`) {
				t.Errorf("%s: inline script %s", p, tag)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/", nil)
	req.Host = "attacker.example:80"
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host attacker.example: %d, want 421", resp.StatusCode)
	}
	req.Host = "localhost:9999" // an SSH tunnel's port
	if resp, err = b.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusMisdirectedRequest {
		t.Errorf("Host localhost:9999 (a tunnel) refused")
	}
}

// TestPages: every page renders what the daemon holds, the fleet with the
// tasks that need the user first.
func TestPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	run := f.create(t, "a running task", task.Running)
	wait := f.create(t, "a waiting task", task.Running, task.Waiting)
	f.git.parked = run
	ctx := context.Background()
	if _, err := f.st.AppendEvents(ctx, event.New(time.Now(), run, event.WatcherNudge{Severity: "warning", Message: "the same edit three times"})); err != nil {
		t.Fatal(err)
	}
	b := f.login(t)
	_, fleet, _ := get(t, b, f, "/")
	if i, j := strings.Index(fleet, string(wait)), strings.Index(fleet, string(run)); i < 0 || j < 0 || i > j {
		t.Errorf("the waiting task should come before the running one:\n%s", fleet)
	}
	if !strings.Contains(fleet, "asks: Which colour should the banner be?") || !strings.Contains(fleet, "1 need you") {
		t.Errorf("the fleet does not show the question:\n%s", fleet)
	}
	for _, c := range []struct{ path, want string }{
		{"/tasks/" + string(wait), "asks: Which colour should the banner be?"},
		{"/tasks/" + string(run), "queued → running"},
		{"/tasks/" + string(run) + "/diff", "the task has no worktree"},
		{"/diagnoses", "the same edit three times"},
		{"/sync", "no sync messages"},
		{"/merge", "the gate failed: &lt;b&gt;make test&lt;/b&gt;"},
	} {
		code, page, _ := get(t, b, f, c.path)
		if code != http.StatusOK || !strings.Contains(page, c.want) {
			t.Errorf("GET %s: %d, want 200 with %q:\n%s", c.path, code, c.want, page)
		}
	}
	if code, page, _ := get(t, b, f, "/tasks/t-nosuch"); code < 400 || code > 499 || !strings.Contains(page, "t-nosuch") {
		t.Errorf("an unknown task: %d, want the daemon's 4xx with its message:\n%s", code, page)
	}
}

// TestHostileTextEscaped: a task's text (markup, quotes, terminal escapes)
// reaches every page as text.
func TestHostileTextEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	hostile := "<script>alert('x')</script> \"><img src=x onerror=alert(1)> \x1b[31mred"
	id := f.create(t, hostile)
	if _, err := f.c.Send(context.Background(), string(id), hostile); err != nil {
		t.Fatal(err)
	}
	b := f.login(t)
	for _, p := range []string{"/", "/tasks/" + string(id)} {
		_, page, _ := get(t, b, f, p)
		for _, bad := range []string{"<script>alert", "<img src=x", "\x1b"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: %q reached the page unescaped", p, bad)
			}
		}
		if !strings.Contains(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") || !strings.Contains(page, `\x1b[31mred`) {
			t.Errorf("%s: the escaped text is missing:\n%s", p, page)
		}
	}
	// The live stream's fragments are escaped alike: the task's stream
	// replays its conversation after event 0 (the message queued above).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/events?after=0&task="+string(id), nil)
	b.Timeout = 0
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "<script>alert") || strings.Contains(l, "<img src=x") || strings.Contains(l, "\x1b") {
			t.Fatalf("the stream sent %q unescaped", l)
		}
		if strings.HasPrefix(l, "data: ") && strings.Contains(l, "&lt;script&gt;alert(&#39;x&#39;)") {
			return
		}
	}
	t.Fatalf("the stream ended without the escaped message: %v", sc.Err())
}

// TestActions: every action reaches the daemon through its API and the
// daemon acts.
func TestActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	ctx := context.Background()
	wait := f.create(t, "waits", task.Running, task.Waiting)
	run := f.create(t, "runs", task.Running)
	queued := f.create(t, "queued")
	b := f.login(t)
	tok := csrf(t, b, f)
	act := func(id task.ID, action, text string, want int) string {
		t.Helper()
		code, out := post(t, b, f, "/tasks/"+string(id)+"/"+action, tok, url.Values{"text": {text}})
		if code != want {
			t.Errorf("%s %s: %d, want %d: %s", action, id, code, want, out)
		}
		return out
	}
	status := func(id task.ID) task.Status {
		d, err := f.c.GetTask(ctx, string(id))
		if err != nil {
			t.Fatal(err)
		}
		return d.Task.Status
	}
	act(run, "answer", "blue", http.StatusConflict) // not waiting
	if out := act(wait, "answer", "blue", http.StatusOK); !strings.Contains(out, "answer #") {
		t.Errorf("answer: %s", out)
	}
	act(run, "send", "", http.StatusBadRequest)
	act(run, "send", "look at main.go", http.StatusOK)
	act(run, "urgent", "stop editing", http.StatusOK)
	act(run, "nudge", "try the tests", http.StatusOK)
	d, err := f.c.GetTask(ctx, string(run))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pending) != 3 {
		t.Errorf("the running task has %d pending messages, want 3 (send, urgent, nudge): %+v", len(d.Pending), d.Pending)
	}
	act(queued, "pause", "", http.StatusOK)
	if s := status(queued); s != task.Paused {
		t.Errorf("after pause: %s", s)
	}
	act(queued, "resume", "", http.StatusOK)
	if s := status(queued); s == task.Paused {
		t.Errorf("after resume: still %s", s)
	}
	act(queued, "escalate", "", http.StatusOK)
	act(run, "merge-retry", "", http.StatusOK)
	if len(f.git.retried) != 1 || f.git.retried[0] != string(run) {
		t.Errorf("merge retries %v, want [%s]", f.git.retried, run)
	}
	act(queued, "cancel", "", http.StatusOK)
	if s := status(queued); s != task.Cancelled {
		t.Errorf("after cancel: %s", s)
	}
	act(queued, "explode", "", http.StatusNotFound)
	// A plain form post (no htmx) is sent back to the task.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/tasks/"+string(run)+"/send", strings.NewReader(url.Values{"csrf": {tok}, "text": {"hi"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/tasks/"+string(run) {
		t.Errorf("form post: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestCSRFRefused: an action without the session's CSRF token, with
// another's, or from another origin is refused and the daemon does nothing.
func TestCSRFRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	id := f.create(t, "queued")
	b := f.login(t)
	other := f.login(t)
	otherTok := csrf(t, other, f)
	for name, tok := range map[string]string{"none": "", "another session's": otherTok, "made up": strings.Repeat("0", 64)} {
		if code, _ := post(t, b, f, "/tasks/"+string(id)+"/pause", tok, nil); code != http.StatusForbidden {
			t.Errorf("pause with %s CSRF token: %d, want 403", name, code)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/tasks/"+string(id)+"/pause", nil)
	req.Header.Set("X-CSRF-Token", csrf(t, b, f))
	req.Header.Set("Origin", "http://attacker.example")
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin pause: %d, want 403", resp.StatusCode)
	}
	d, err := f.c.GetTask(context.Background(), string(id))
	if err != nil || d.Task.Status != task.Queued {
		t.Errorf("the task is %s (%v) after refused actions, want queued", d.Task.Status, err)
	}
}

// TestRateLimit: a session's actions beyond its bucket are refused with
// 429 until the bucket refills (the clock is the test's).
func TestRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clock := make(chan time.Time, 1)
	clock <- now
	read := func() time.Time { t := <-clock; clock <- t; return t }
	f := newFixture(t, web.Options{ActionBurst: 3, ActionsPerMinute: 6, Now: read})
	id := f.create(t, "queued", task.Running)
	b := f.login(t)
	tok := csrf(t, b, f)
	for i := range 3 {
		if code, out := post(t, b, f, "/tasks/"+string(id)+"/send", tok, url.Values{"text": {"m"}}); code != http.StatusOK {
			t.Fatalf("action %d: %d %s", i, code, out)
		}
	}
	if code, out := post(t, b, f, "/tasks/"+string(id)+"/send", tok, url.Values{"text": {"m"}}); code != http.StatusTooManyRequests || !strings.Contains(out, "too many actions") {
		t.Fatalf("the fourth action at once: %d %s, want 429", code, out)
	}
	<-clock
	clock <- now.Add(10 * time.Second) // one token back at 6 a minute
	if code, _ := post(t, b, f, "/tasks/"+string(id)+"/send", tok, url.Values{"text": {"m"}}); code != http.StatusOK {
		t.Errorf("an action after 10s: %d, want 200", code)
	}
}

// TestSessionsEndWhenIdle: a session used within 12 hours goes on (each
// use counts), one left unused longer ends, and signing in again works
// (the clock is the test's).
func TestSessionsEndWhenIdle(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clock := make(chan time.Time, 1)
	clock <- now
	read := func() time.Time { t := <-clock; clock <- t; return t }
	set := func(d time.Duration) { <-clock; clock <- now.Add(d) }
	f := newFixture(t, web.Options{Now: read})
	b := f.login(t)
	for _, d := range []time.Duration{11 * time.Hour, 22 * time.Hour, 34 * time.Hour} {
		set(d)
		if code, _, _ := get(t, b, f, "/"); code != http.StatusOK {
			t.Fatalf("the fleet at +%s, 12 h or less after the last use: %d, want 200", d, code)
		}
	}
	set(46*time.Hour + time.Second)
	if code, page, _ := get(t, b, f, "/"); code != http.StatusUnauthorized || !strings.Contains(page, "neuraphage web") {
		t.Fatalf("the fleet 12 h and 1 s after the last use: %d, want 401 with how to sign in", code)
	}
	set(46*time.Hour + 2*time.Second)
	if code, _, _ := get(t, b, f, "/"); code != http.StatusUnauthorized {
		t.Errorf("the ended session answered again: %d", code)
	}
	b = f.login(t)
	if code, _, _ := get(t, b, f, "/"); code != http.StatusOK {
		t.Errorf("the fleet after signing in again: %d, want 200", code)
	}
}

// TestSSEDeliversEvents: the fleet stream sends a task created after the
// page opened, and a task's stream its status change and conversation.
func TestSSEDeliversEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, web.Options{})
	b := f.login(t)
	b.Timeout = 0
	first := f.create(t, "first")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := func(path string) *bufio.Scanner {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+path, nil)
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		return sc
	}
	until := func(sc *bufio.Scanner, what string, cond func(event, data string) bool) {
		t.Helper()
		name := ""
		for sc.Scan() {
			l := sc.Text()
			if v, ok := strings.CutPrefix(l, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(l, "data: "); ok && cond(name, v) {
				return
			}
		}
		t.Fatalf("the stream ended before %s: %v", what, sc.Err())
	}
	// Whether the hub loaded before or after the page subscribed, the
	// page gets the whole fleet: the listing holds what happened before
	// the watch stream opened.
	fleet := stream("/events")
	until(fleet, "the first task", func(ev, data string) bool { return ev == "fleet" && strings.Contains(data, string(first)) })
	second := f.create(t, "created after the page opened")
	until(fleet, "the new task", func(ev, data string) bool { return ev == "fleet" && strings.Contains(data, string(second)) })
	one := stream("/events?task=" + string(second))
	if _, _, err := f.st.UpdateTask(context.Background(), second, storeTransition(task.Running)); err != nil {
		t.Fatal(err)
	}
	until(one, "the status line", func(ev, data string) bool { return ev == "line" && strings.Contains(data, "queued → running") })
	until(fleet, "the running row", func(ev, data string) bool {
		return (ev == "fleet" || ev == "row") && strings.Contains(data, `id="row-`+string(second)+`" class="st-running`)
	})
}

func storeTransition(s task.Status) store.Mutation { return store.Transition(s, "", time.Now()) }

// BenchmarkFleetPage500 is the whole server side of the fleet page with 500
// tasks: reading them from the daemon's API (SQLite), the Watcher's and
// the main watcher's views, and rendering, over HTTP.
func BenchmarkFleetPage500(b *testing.B) {
	f := newFixture(b, web.Options{})
	statuses := []task.Status{task.Running, task.Waiting}
	for i := range 500 {
		switch i % 4 {
		case 0:
			f.create(b, fmt.Sprintf("task %d", i))
		case 1:
			f.create(b, fmt.Sprintf("task %d", i), statuses[:1]...)
		default:
			f.create(b, fmt.Sprintf("task %d", i), statuses...)
		}
	}
	br := f.login(b)
	var size int
	for b.Loop() {
		code, page, _ := get(b, br, f, "/")
		if code != http.StatusOK {
			b.Fatalf("status %d", code)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size), "bytes/page")
}
