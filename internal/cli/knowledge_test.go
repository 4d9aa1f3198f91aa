package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

var (
	jwtDelivered = t0.Add(2*time.Minute + 1500*time.Millisecond)
	jwtToUI      = api.SyncMessage{ID: 3, LearningID: 7, From: "t-abc12", To: "t-ui000", Urgency: "blocking", Relevance: "high", Score: 0.8,
		Message: "Tokens without an iat claim are rejected: set iat when signing.", Reason: "shared tags: auth, jwt", DecidedBy: "persona",
		State: "delivered", InjectionID: 11, CreatedAt: t0.Add(2 * time.Minute), DeliveredAt: &jwtDelivered}
	jwtToTests = api.SyncMessage{ID: 4, LearningID: 7, From: "t-abc12", To: "t-test0", Urgency: "helpful", Score: 0.4,
		Message: "Set iat in the test fixtures' tokens.", DecidedBy: "rules", State: "held", Note: "cooldown", CreatedAt: t0.Add(2 * time.Minute)}
	jwtLearning = api.Learning{ID: 7, Kind: "error-resolution", Summary: "the JWT library rejects tokens without an iat claim",
		Detail: "jwt.Parse returned \"token has no iat\".\nSetting iat in Sign fixed it.", Tags: []string{"auth", "jwt"}, Files: []string{"auth/jwt.go", "auth/sign.go"},
		Sources:   []api.LearningSource{{TaskID: "t-abc12", Kind: "error-resolution", At: t0}, {TaskID: "t-test0", Kind: "statement", At: t0.Add(time.Minute)}},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	configLearning = api.Learning{ID: 12, Kind: "discovery", Summary: "the config parser is in internal/config/parse.go",
		Sources: []api.LearningSource{{TaskID: "t-ui000", Kind: "discovery", At: t0.Add(3 * time.Minute)}}, CreatedAt: t0.Add(3 * time.Minute), UpdatedAt: t0.Add(3 * time.Minute)}
)

func TestWriteLearnings(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeLearnings(&b, []api.Learning{jwtLearning, configLearning}, t0.Add(5*time.Minute))
	want := `ID   KIND              FROM        UPDATED  TAGS      SUMMARY
#7   error-resolution  t-abc12 +1  4m       auth,jwt  the JWT library rejects tokens without an iat claim
#12  discovery         t-ui000     2m       -         the config parser is in internal/config/parse.go
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	b.Reset()
	writeLearnings(&b, nil, t0)
	if !strings.HasPrefix(b.String(), "no learnings yet: ") {
		t.Errorf("empty: %q", b.String())
	}
}

func TestWriteLearning(t *testing.T) {
	t.Parallel()
	l := jwtLearning
	l.Relayed = []api.SyncMessage{jwtToUI, jwtToTests}
	var b bytes.Buffer
	writeLearning(&b, l, t0.Add(5*time.Minute), time.UTC)
	want := `learning: #7 (error-resolution)
summary:  the JWT library rejects tokens without an iat claim
detail:   jwt.Parse returned "token has no iat".
          Setting iat in Sign fixed it.
tags:     auth, jwt
files:    auth/jwt.go, auth/sign.go
found:    09:00:00 (5m ago), last 09:01:00 (4m ago)
sources:
  t-abc12  error-resolution  09:00:00 (5m ago)
  t-test0  statement         09:01:00 (4m ago)
relayed to 2 tasks:
  t-ui000  blocking  delivered  delivered 09:02:01 (2m ago), after 1.5s  Tokens without an iat claim are rejected: set iat when sign…
  t-test0  helpful   held       -                                        Set iat in the test fixtures' tokens.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("show (-want +got):\n%s", diff)
	}

	b.Reset()
	writeLearning(&b, configLearning, t0.Add(5*time.Minute), time.UTC)
	want = `learning: #12 (discovery)
summary:  the config parser is in internal/config/parse.go
tags:     -
files:    -
found:    09:03:00 (2m ago), last 09:03:00 (2m ago)
sources:
  t-ui000  discovery  09:03:00 (2m ago)
relayed:  to no task
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("show, not relayed (-want +got):\n%s", diff)
	}
}

func TestWriteSyncMessages(t *testing.T) {
	t.Parallel()
	ignored := api.SyncMessage{ID: 5, LearningID: 12, From: "t-ui000", To: "t-abc12", Urgency: "fyi", DecidedBy: "hook", State: "blocked", CreatedAt: t0.Add(4 * time.Minute), Message: "x"}
	var b bytes.Buffer
	writeSyncMessages(&b, []api.SyncMessage{jwtToUI, jwtToTests, ignored}, time.UTC)
	want := `ID  WHEN             LEARNING  FROM → TO          URGENCY   STATE      DELIVERED   MESSAGE
3   Nov 21 09:02:00  #7        t-abc12 → t-ui000  blocking  delivered  after 1.5s  Tokens without an iat claim are rejected: set iat when sign…
    why: shared tags: auth, jwt; decided by persona
4   Nov 21 09:02:00  #7        t-abc12 → t-test0  helpful   held       -           Set iat in the test fixtures' tokens.
    why: decided by rules; note: cooldown
5   Nov 21 09:04:00  #12       t-ui000 → t-abc12  fyi       blocked    -           x
    why: decided by hook
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	b.Reset()
	writeSyncMessages(&b, nil, time.UTC)
	if !strings.HasPrefix(b.String(), "no sync messages yet: ") {
		t.Errorf("empty: %q", b.String())
	}
}

func TestParseLearningID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"12": 12, "#12": 12, " #7 ": 7} {
		if got, err := parseLearningID(in); err != nil || got != want {
			t.Errorf("parseLearningID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "#", "x", "t-abc12", "0", "-3", "#-3", "1.5", "##12"} {
		if _, err := parseLearningID(in); err == nil {
			t.Errorf("parseLearningID(%q) took it", in)
		}
	}
}

// knowledgeDaemon serves the knowledge routes from jwtLearning and
// configLearning, and sends the request URIs it gets to asked.
func knowledgeDaemon(t *testing.T, asked chan<- string) string {
	t.Helper()
	notFound := func(w http.ResponseWriter, id string) {
		w.WriteHeader(http.StatusNotFound)
		writeAPI(w, api.Error{Code: api.CodeNotFound, Message: "learning " + id + ": not found", Hint: "`neuraphage knowledge list` lists the learnings"})
	}
	return fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/knowledge": func(w http.ResponseWriter, r *http.Request) {
			asked <- r.URL.RequestURI()
			switch {
			case r.URL.Query().Get("q") == "nothing":
				writeAPI(w, []api.Learning{})
			case r.URL.Query().Get("q") != "":
				writeAPI(w, []api.Learning{configLearning})
			default:
				writeAPI(w, []api.Learning{jwtLearning, configLearning})
			}
		},
		"GET /v1/knowledge/{id}": func(w http.ResponseWriter, r *http.Request) {
			asked <- r.Method + " " + r.URL.RequestURI()
			if r.PathValue("id") != "7" {
				notFound(w, r.PathValue("id"))
				return
			}
			l := jwtLearning
			l.Relayed = []api.SyncMessage{jwtToUI}
			writeAPI(w, l)
		},
		"DELETE /v1/knowledge/{id}": func(w http.ResponseWriter, r *http.Request) {
			asked <- r.Method + " " + r.URL.RequestURI()
			if r.PathValue("id") != "7" {
				notFound(w, r.PathValue("id"))
				return
			}
			writeAPI(w, jwtLearning)
		},
		"GET /v1/sync/messages": func(w http.ResponseWriter, r *http.Request) {
			asked <- r.URL.RequestURI()
			if r.URL.Query().Get("task") == "zzz" {
				w.WriteHeader(http.StatusNotFound)
				writeAPI(w, api.Error{Code: api.CodeNotFound, Message: `task "zzz": not found`, Hint: "`neuraphage task list --all` lists every task"})
				return
			}
			if r.URL.Query().Get("task") == "quiet" {
				writeAPI(w, []api.SyncMessage{})
				return
			}
			writeAPI(w, []api.SyncMessage{jwtToUI})
		},
	})
}

func TestKnowledgeCommands(t *testing.T) {
	t.Parallel()
	asked := make(chan string, 8)
	home := knowledgeDaemon(t, asked)
	tests := []struct {
		args  []string
		asked string
		out   []string // parts of the output, in order
	}{
		{[]string{"knowledge", "list"}, "/v1/knowledge", []string{"ID   KIND", "#7   error-resolution  t-abc12 +1", "#12  discovery"}},
		{[]string{"knowledge", "list", "--task", "abc", "--limit", "2"}, "/v1/knowledge?limit=2&task=abc", []string{"#7 ", "(limit reached: --limit 0 shows every one)"}},
		{[]string{"knowledge", "search", "config", " parser"}, "/v1/knowledge?limit=20&q=config+parser", []string{"#12  discovery"}},
		{[]string{"knowledge", "search", "nothing"}, "/v1/knowledge?limit=20&q=nothing", []string{`no learning matches "nothing"`}},
		{[]string{"knowledge", "show", "#7"}, "GET /v1/knowledge/7", []string{"learning: #7 (error-resolution)", "relayed to 1 task:", "t-ui000  blocking  delivered  delivered "}},
		{[]string{"knowledge", "forget", "7"}, "DELETE /v1/knowledge/7", []string{"forgot learning #7: the JWT library rejects tokens without an iat claim"}},
		{[]string{"sync", "messages", "--task", "ui0", "--limit", "5"}, "/v1/sync/messages?limit=5&task=ui0", []string{"ID  WHEN", "t-abc12 → t-ui000  blocking  delivered  after 1.5s", "    why: shared tags: auth, jwt; decided by persona"}},
		{[]string{"sync", "messages", "--task", "quiet"}, "/v1/sync/messages?limit=50&task=quiet", []string{"no sync messages yet"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, home, "", tt.args...)
		if code != ExitOK {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errOut)
			continue
		}
		if got := <-asked; got != tt.asked {
			t.Errorf("%q asked %q; want %q", tt.args, got, tt.asked)
		}
		rest := out
		for _, part := range tt.out {
			i := strings.Index(rest, part)
			if i < 0 {
				t.Errorf("%q: no %q in order in:\n%s", tt.args, part, out)
				break
			}
			rest = rest[i+len(part):]
		}
	}
}

func TestKnowledgeCommandsJSON(t *testing.T) {
	t.Parallel()
	asked := make(chan string, 8)
	home := knowledgeDaemon(t, asked)

	code, out, _ := runCLI(t, home, "", "knowledge", "list", "--json")
	<-asked
	var ls []api.Learning
	if err := json.Unmarshal([]byte(out), &ls); code != ExitOK || err != nil || len(ls) != 2 || ls[0].ID != 7 || len(ls[0].Sources) != 2 {
		t.Errorf("list --json: exit %d, %v:\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, home, "", "knowledge", "search", "nothing", "--json")
	<-asked
	if code != ExitOK || out != "[]\n" {
		t.Errorf("search --json, no match: exit %d: %q", code, out)
	}
	for _, cmd := range []string{"show", "forget"} {
		code, out, _ = runCLI(t, home, "", "knowledge", cmd, "7", "--json")
		<-asked
		var l api.Learning
		if err := json.Unmarshal([]byte(out), &l); code != ExitOK || err != nil || l.ID != 7 || l.Summary != jwtLearning.Summary {
			t.Errorf("%s --json: exit %d, %v:\n%s", cmd, code, err, out)
		}
		if cmd == "show" && (len(l.Relayed) != 1 || l.Relayed[0].To != "t-ui000") {
			t.Errorf("show --json: relayed %+v", l.Relayed)
		}
	}
	code, out, _ = runCLI(t, home, "", "sync", "messages", "--json")
	<-asked
	var ms []api.SyncMessage
	if err := json.Unmarshal([]byte(out), &ms); code != ExitOK || err != nil || len(ms) != 1 || ms[0].DeliveredAt == nil {
		t.Errorf("sync messages --json: exit %d, %v:\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, home, "", "sync", "messages", "--task", "quiet", "--json")
	<-asked
	if code != ExitOK || out != "[]\n" {
		t.Errorf("sync messages --json, none: exit %d: %q", code, out)
	}
}

func TestKnowledgeCommandErrors(t *testing.T) {
	t.Parallel()
	asked := make(chan string, 8)
	home := knowledgeDaemon(t, asked)
	usage := []struct {
		args []string
		want string // a part of stderr
	}{
		{[]string{"knowledge", "show"}, "knowledge show takes 1 argument(s), got 0"},
		{[]string{"knowledge", "show", "t-abc12"}, `"t-abc12" is not a learning's number`},
		{[]string{"knowledge", "show", "0"}, "hint: name a learning as `neuraphage knowledge list` shows it: 12 or #12"},
		{[]string{"knowledge", "forget", "x"}, `"x" is not a learning's number`},
		{[]string{"knowledge", "forget", "1", "2"}, "knowledge forget takes 1 argument(s), got 2"},
		{[]string{"knowledge", "search"}, "knowledge search needs a QUERY"},
		{[]string{"knowledge", "search", " "}, "the query is empty"},
		{[]string{"knowledge", "list", "--limit", "-1"}, "--limit -1: want a number of learnings, 0 for all"},
		{[]string{"knowledge", "list", "extra"}, "knowledge list takes no arguments"},
		{[]string{"knowledge", "lst"}, `unknown command "lst"`},
		{[]string{"sync", "messages", "--limit", "0"}, "--limit 0: want a positive number of messages"},
		{[]string{"sync", "msgs"}, `unknown command "msgs"`},
	}
	for _, tt := range usage {
		code, out, errOut := runCLI(t, home, "", tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "hint: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 with %q and a hint", tt.args, code, out, errOut, tt.want)
		}
	}
	select {
	case r := <-asked:
		t.Errorf("a usage error asked the daemon %s", r)
	default:
	}

	// What the daemon does not know is a usage error too, with its hint.
	for _, tt := range []struct {
		args       []string
		want, hint string
	}{
		{[]string{"knowledge", "show", "#8"}, "learning 8: not found", "hint: `neuraphage knowledge list` lists the learnings"},
		{[]string{"knowledge", "forget", "9"}, "learning 9: not found", "hint: `neuraphage knowledge list` lists the learnings"},
		{[]string{"sync", "messages", "--task", "zzz"}, `task "zzz": not found`, "hint: `neuraphage task list --all`"},
	} {
		code, _, errOut := runCLI(t, home, "", tt.args...)
		<-asked
		if code != ExitUsage || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, tt.hint) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with %q and %q", tt.args, code, errOut, tt.want, tt.hint)
		}
	}
}

// TestKnowledgeUnavailable: a daemon that does not serve the knowledge
// store exits 3 with its hint.
func TestKnowledgeUnavailable(t *testing.T) {
	t.Parallel()
	unavailable := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		writeAPI(w, api.Error{Code: api.CodeUnavailable, Message: "the knowledge store is not served by this daemon", Hint: "see the Syncer's settings"})
	}
	home := fakeDaemon(t, map[string]http.HandlerFunc{"GET /v1/knowledge": unavailable, "GET /v1/sync/messages": unavailable})
	for _, args := range [][]string{{"knowledge", "list"}, {"sync", "messages"}} {
		code, _, errOut := runCLI(t, home, "", args...)
		if code != ExitUnreachable || !strings.Contains(errOut, "not served by this daemon") || !strings.Contains(errOut, "hint: see the Syncer's settings") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestSupervisionStatsSyncer(t *testing.T) {
	t.Parallel()
	sy := &api.SyncerStats{Enabled: true, Running: true, LastSweep: t0.Add(-5 * time.Second), Sweeps: 40, Observations: 900,
		Learnings: map[string]uint64{"error-resolution": 3, "discovery": 5, "explicit": 1}, Merged: 2, Evaluated: 9, Sent: 6, Held: 1, Delivered: 5,
		Ignored: map[string]uint64{"not-relevant": 4, "already-sent": 1, "no-candidates": 4}, Briefed: 2,
		PersonaCalls: 9, PersonaFailures: 1, ModelTokens: 12300, ModelUSD: 0.0123, Degraded: true, DegradedReason: "the syncer persona timed out after 20s"}
	var b bytes.Buffer
	writeSyncerStats(&b, *sy, t0, time.UTC)
	want := `syncer: enabled, running
sweeps:      40, the last 08:59:55 (5s ago); 900 observations read
learnings:   9 stored (5 discovery, 3 error-resolution, 1 explicit), 2 merged into known ones
relays:      9 evaluated, 6 sent, 1 held, 5 delivered; 2 new tasks briefed
not relayed: 4 no-candidates, 4 not-relevant, 1 already-sent
model:       persona 9 calls, 1 failed; turn-end pass 0 calls, 0 failed; 12.3k tokens, $0.0123
degraded:    the rules decide alone: the syncer persona timed out after 20s
faults:      0 panics recovered, 0 restarts
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("syncer stats (-want +got):\n%s", diff)
	}

	b.Reset()
	writeSupervisionStats(&b, api.SupervisionStats{Syncer: &api.SyncerStats{}}, t0, time.UTC)
	if out := b.String(); !strings.Contains(out, "tier 1:      no findings\nsyncer: disabled: no learning is relayed") ||
		!strings.Contains(out, "learnings:   0 stored, 0 merged into known ones\n") || !strings.Contains(out, "not relayed: none\n") {
		t.Errorf("disabled:\n%s", out)
	}
	b.Reset()
	writeSupervisionStats(&b, api.SupervisionStats{Enabled: true, Tier1: map[string]uint64{"repeat": 1}}, t0, time.UTC)
	if out := b.String(); strings.Contains(out, "syncer") {
		t.Errorf("without a Syncer:\n%s", out)
	}

	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/supervision/stats": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.SupervisionStats{Enabled: true, Running: true, Started: time.Now(), Syncer: &api.SyncerStats{Enabled: true, Running: true, Sent: 3}})
		},
	})
	code, out, errOut := runCLI(t, home, "", "supervision", "stats")
	if code != ExitOK || !strings.Contains(out, "syncer: enabled, running\n") || !strings.Contains(out, "relays:      0 evaluated, 3 sent") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	code, out, _ = runCLI(t, home, "", "supervision", "stats", "--json")
	var st api.SupervisionStats
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil || st.Syncer == nil || st.Syncer.Sent != 3 ||
		!strings.Contains(out, `"learnings": {}`) || !strings.Contains(out, `"ignored": {}`) {
		t.Errorf("--json: exit %d, %v:\n%s", code, err, out)
	}
}
