package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// cookieName is the session cookie.
const cookieName = "neuraphage_session"

// loginTTL is how long an unused login token works.
const loginTTL = 15 * time.Minute

// sessionIdle is how long a session may go unused before it ends: a
// browser left signed in on a shared machine is not signed in forever.
const sessionIdle = 12 * time.Hour

// contentSecurityPolicy lets the page load scripts, styles and streams from
// the dashboard only: no inline script, no eval, no frames.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// session is one browser's login: its CSRF token, its action bucket (as
// of at) and when it was last used.
type session struct {
	csrf   string
	tokens float64
	at     time.Time
	used   time.Time
}

// sessions holds the login tokens not yet used and the live sessions.
type sessions struct {
	mu     sync.Mutex
	now    func() time.Time
	burst  float64
	rate   float64 // tokens per second
	logins map[string]time.Time
	live   map[string]*session
}

func newSessions(now func() time.Time, burst, rate float64) *sessions {
	return &sessions{now: now, burst: burst, rate: rate, logins: map[string]time.Time{}, live: map[string]*session{}}
}

func random() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// mint returns a new login token, good once within loginTTL.
func (ss *sessions) mint() string {
	t := random()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for k, exp := range ss.logins {
		if now.After(exp) {
			delete(ss.logins, k)
		}
	}
	ss.logins[t] = now.Add(loginTTL)
	return t
}

// exchange spends a login token for a new session's id.
func (ss *sessions) exchange(token string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.logins[token]
	if !ok {
		return "", false
	}
	delete(ss.logins, token)
	now := ss.now()
	if now.After(exp) {
		return "", false
	}
	for k, s := range ss.live {
		if now.Sub(s.used) > sessionIdle {
			delete(ss.live, k)
		}
	}
	id := random()
	ss.live[id] = &session{csrf: random(), tokens: ss.burst, at: now, used: now}
	return id, true
}

// get returns the live session id names and marks it used; a session
// unused for longer than sessionIdle is ended instead.
func (ss *sessions) get(id string) (*session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.live[id]
	if !ok {
		return nil, false
	}
	now := ss.now()
	if now.Sub(s.used) > sessionIdle {
		delete(ss.live, id)
		return nil, false
	}
	s.used = now
	return s, true
}

func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.live, id)
}

func (ss *sessions) rotate() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	clear(ss.logins)
	clear(ss.live)
}

// allow takes one token from the session's bucket.
func (ss *sessions) allow(s *session) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	s.tokens = min(ss.burst, s.tokens+now.Sub(s.at).Seconds()*ss.rate)
	s.at = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// guard sets the security headers of every answer and, on loopback,
// refuses a Host header that does not name the loopback interface.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		if s.o.Loopback && !loopbackHost(r.Host) {
			http.Error(w, "this dashboard answers only to localhost, 127.0.0.1 or [::1] (Host "+r.Host+" refused)", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names the loopback interface,
// with any port (an SSH tunnel may forward another port).
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type sessionKey struct{}

// authed lets only a request with a live session through; a POST must
// also carry the session's CSRF token and come from this origin.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(cookieName)
		var sess *session
		ok := false
		if err == nil {
			sess, ok = s.auth.get(c.Value)
		}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			s.tpl.page(w, "login", pageData{Title: "sign in"})
			return
		}
		if r.Method == http.MethodPost {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				http.Error(w, "cross-origin request refused", http.StatusForbidden)
				return
			}
			got := r.Header.Get("X-CSRF-Token")
			if got == "" {
				got = r.PostFormValue("csrf")
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) != 1 {
				http.Error(w, "missing or wrong CSRF token: reload the page", http.StatusForbidden)
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sessionRef{id: c.Value, s: sess})))
	}
}

type sessionRef struct {
	id string
	s  *session
}

func sessionOf(r *http.Request) sessionRef {
	ref, _ := r.Context().Value(sessionKey{}).(sessionRef)
	return ref
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == host
}

// login exchanges a login token for a session cookie and redirects to the
// fleet, so that the token leaves the address bar and the history.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	id, ok := s.auth.exchange(r.URL.Query().Get("token"))
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		s.tpl.page(w, "login", pageData{Title: "sign in", Flash: "This sign-in link was used already, has expired or was never issued."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: s.o.Secure, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	s.auth.end(sessionOf(r).id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.o.Secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// metrics lets a scraper with the bearer token, or a signed-in browser,
// read h.
func (s *Server) metrics(h http.Handler) http.Handler {
	want := []byte("Bearer " + s.o.MetricsToken)
	browser := s.authed(h.ServeHTTP)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.o.MetricsToken != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		browser(w, r)
	})
}
