package knowledge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// stream builds the observations of one task as the native agent emits
// them.
type stream struct {
	turn int
	n    int
	evs  []event.Payload
}

func (s *stream) start() *stream {
	s.turn++
	s.evs = append(s.evs, event.TurnStarted{Turn: s.turn, Engine: "native"})
	return s
}

func (s *stream) text(t string) *stream {
	s.evs = append(s.evs, event.Text{Turn: s.turn, Text: t})
	return s
}

// tool adds a call and its result (content as the tool returned it) and
// the files it changed.
func (s *stream) tool(name string, args map[string]any, failed bool, content string, changed ...string) *stream {
	s.n++
	id := fmt.Sprintf("call_%d", s.n)
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	s.evs = append(s.evs, event.ToolCall{Turn: s.turn, CallID: id, Name: name, Args: raw}, toolResult(s.turn, id, name, failed, content))
	for _, p := range changed {
		s.evs = append(s.evs, event.FileChanged{Turn: s.turn, Path: p, Op: "modified", Tool: name})
	}
	return s
}

func (s *stream) learning(summary string, tags ...string) *stream {
	s.evs = append(s.evs, event.Learning{Turn: s.turn, LearningID: 1, Summary: summary, Tags: tags})
	return s
}

func (s *stream) end() *stream {
	s.evs = append(s.evs, event.TurnEnded{Turn: s.turn, StopReason: "tool_use"})
	return s
}

// toolResult makes a ToolResult the way the agent loop does (preview and
// tail of 200 bytes).
func toolResult(turn int, id, name string, failed bool, content string) event.ToolResult {
	const n = 200
	t := strings.TrimSpace(content)
	r := event.ToolResult{Turn: turn, CallID: id, Name: name, Error: failed, Size: len(content), Preview: t, Hash: event.ContentHash(content)}
	if len(t) > n {
		p := t[:n]
		for !utf8.ValidString(p) {
			p = p[:len(p)-1]
		}
		r.Preview = p + "…"
		tail := t[len(t)-min(n, len(t)-n):]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		r.Tail = "…" + tail
	}
	return r
}

// run feeds the stream to x as task id and returns all candidates.
func run(x *Extractor, id string, s *stream) []Candidate {
	var out []Candidate
	for _, p := range s.evs {
		out = append(out, x.Observe(id, p)...)
	}
	return out
}

var all = ExtractConfig{Errors: true, Discoveries: true, Statements: true}

const goTestFailure = `--- FAIL: TestToken (0.00s)
    token_test.go:12: jwt: token has no iat claim
FAIL
FAIL	example.com/app/auth	0.003s
FAIL
[exit code 1]
`

func bash(cmd string) map[string]any { return map[string]any{"command": cmd} }

func TestErrorResolution(t *testing.T) {
	t.Parallel()
	s := new(stream).start().
		tool("bash", bash("go test ./auth"), true, goTestFailure).end().
		start().
		tool("read_file", map[string]any{"path": "auth/token.go"}, false, "package auth\n").
		tool("edit_file", map[string]any{"path": "auth/token.go", "old": "a", "new": "b"}, false, "Edited auth/token.go.", "auth/token.go").end().
		start().
		tool("bash", bash(`go  test "./auth"`), false, "ok  \texample.com/app/auth\t0.004s\n[exit code 0]\n").end()
	got := run(NewExtractor(all), "t1", s)
	want := []Candidate{{
		Kind:    ErrorResolution,
		Summary: "`go test ./auth` failed (jwt: token has no iat claim) until auth/token.go changed",
		Tags:    []string{"bash", "error"},
		Files:   []string{"auth/token.go"},
		Turn:    3,
	}}
	if diff := cmp.Diff(want, got, cmpIgnoreDetail); diff != "" {
		t.Fatalf("candidates (-want +got):\n%s", diff)
	}
	if d := got[0].Detail; !strings.Contains(d, "no iat claim") || !strings.Contains(d, "auth/token.go") {
		t.Errorf("detail misses the error or the file:\n%s", d)
	}
}

var cmpIgnoreDetail = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Detail" }, cmp.Ignore())

func TestErrorResolutionNothing(t *testing.T) {
	t.Parallel()
	fail := func(s *stream) *stream {
		return s.tool("bash", bash("make test"), true, "Error: db not reachable\n[exit code 2]")
	}
	ok := func(s *stream) *stream { return s.tool("bash", bash("make test"), false, "PASS\n[exit code 0]") }
	tests := []struct {
		name string
		cfg  ExtractConfig
		s    *stream
	}{
		{"retried without a change (flaky)", all, ok(fail(new(stream).start()))},
		{"the last failure counts: changed, failed again, passed unchanged", all,
			ok(fail(fail(new(stream).start()).tool("write_file", map[string]any{"path": "db.yaml", "content": "x"}, false, "Wrote db.yaml.", "db.yaml")))},
		{"another command succeeded", all,
			fail(new(stream).start()).tool("write_file", map[string]any{"path": "db.yaml"}, false, "ok", "db.yaml").
				tool("bash", bash("make build"), false, "[exit code 0]")},
		{"success without a failure", all, ok(new(stream).start().tool("write_file", map[string]any{"path": "a.go"}, false, "ok", "a.go"))},
		{"errors disabled", ExtractConfig{Discoveries: true, Statements: true},
			ok(fail(new(stream).start()).tool("write_file", map[string]any{"path": "db.yaml"}, false, "ok", "db.yaml"))},
		{"a file call that works once its file is written", all,
			new(stream).start().tool("read_file", map[string]any{"path": "gen/api.go"}, true, "open gen/api.go: no such file or directory").
				tool("bash", bash("make gen"), false, "[exit code 0]", "gen/api.go").
				tool("read_file", map[string]any{"path": "gen/api.go"}, false, "package gen")},
		{"a tool with no target", all,
			new(stream).start().tool("ask_user", map[string]any{"question": "which db?"}, true, "no user").
				tool("write_file", map[string]any{"path": "db.yaml"}, false, "ok", "db.yaml").
				tool("ask_user", map[string]any{"question": "which db?"}, false, "postgres")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(NewExtractor(tt.cfg), "t1", tt.s); len(got) != 0 {
				t.Errorf("want nothing, got %+v", got)
			}
		})
	}
}

func TestErrorResolutionOncePerFailure(t *testing.T) {
	t.Parallel()
	x := NewExtractor(all)
	s := new(stream).start().
		tool("bash", bash("npm test"), true, "Error: Cannot find module 'left-pad'\n[exit code 1]").
		tool("bash", bash("npm install left-pad"), false, "added 1 package\n[exit code 0]", "package.json", "package-lock.json").
		tool("bash", bash("npm test"), false, "ok\n[exit code 0]").
		tool("bash", bash("npm test"), false, "ok\n[exit code 0]")
	got := run(x, "t1", s)
	if len(got) != 1 {
		t.Fatalf("want one candidate, got %+v", got)
	}
	want := "`npm test` failed (Error: Cannot find module 'left-pad') until package.json, package-lock.json changed"
	if got[0].Summary != want {
		t.Errorf("summary\n got %s\nwant %s", got[0].Summary, want)
	}
}

func TestErrorResolutionTasksApart(t *testing.T) {
	t.Parallel()
	x := NewExtractor(all)
	run(x, "a", new(stream).start().tool("bash", bash("make"), true, "error: x\n[exit code 2]"))
	// Another task's change and success resolve nothing of a's.
	if got := run(x, "b", new(stream).start().tool("edit_file", map[string]any{"path": "x.c"}, false, "ok", "x.c").tool("bash", bash("make"), false, "ok")); len(got) != 0 {
		t.Errorf("task b: %+v", got)
	}
	x.Forget("a")
	if got := run(x, "a", new(stream).start().tool("edit_file", map[string]any{"path": "x.c"}, false, "ok", "x.c").tool("bash", bash("make"), false, "ok")); len(got) != 0 {
		t.Errorf("after Forget: %+v", got)
	}
}

func TestErrorResolutionExternalCLIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"claude Bash", "Bash", map[string]any{"command": "./gradlew test", "description": "run tests"}, "`gradlew test` failed (error: boom) until src/A.java changed"},
		{"codex argv", "shell", map[string]any{"command": []any{"bash", "-lc", "cargo test"}}, "`cargo test` failed (error: boom) until src/A.java changed"},
		{"gemini", "run_shell_command", map[string]any{"command": "pytest -q"}, "`pytest -q` failed (error: boom) until src/A.java changed"},
		{"claude Read", "Read", map[string]any{"file_path": "./gen/out.go"}, "`read_file gen/out.go` failed (error: boom) until src/A.java changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := new(stream).start().tool(tt.tool, tt.args, true, "error: boom").
				tool("Edit", map[string]any{"file_path": "src/A.java"}, false, "ok", "src/A.java").
				tool(tt.tool, tt.args, false, "fine")
			got := run(NewExtractor(all), "t", s)
			if len(got) != 1 || got[0].Summary != tt.want {
				t.Fatalf("got %+v\nwant summary %s", got, tt.want)
			}
		})
	}
}

func TestTellingLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"go test", goTestFailure, "jwt: token has no iat claim"},
		{"go build", "# example.com/app\n./main.go:12:2: undefined: jwt.Parse\n[exit code 1]", "undefined: jwt.Parse"},
		{"python", "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    d['k']\nKeyError: 'k'\n[exit code 1]", "KeyError: 'k'"},
		{"rust first error", "error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\nerror: aborting due to 1 previous error", "error[E0425]: cannot find value 'x' in this scope"},
		{"make noise skipped", "cc -c x.c\nx.c:3: warning: unused\nmake: *** [x.o] Error 1\n[exit code 2]", "warning: unused"},
		{"last line", "building\nstill building\nsegfault at 0x0\n[exit code 139]", "segfault at 0x0"},
		{"exit code suffix", "permission denied [exit code 126]", "permission denied"},
		{"only notes", "[exit code 1]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tellingLine(tt.in); got != tt.want {
				t.Errorf("tellingLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	glob := func(p string) map[string]any { return map[string]any{"pattern": p} }
	var ten strings.Builder
	for i := range 10 {
		fmt.Fprintf(&ten, "internal/x/f%d.go\n", i)
	}
	longLine := strings.Repeat("x", 300)
	tests := []struct {
		name string
		s    *stream
		want []Candidate
	}{
		{"glob with one match", new(stream).start().tool("glob", glob("**/jwt*.go"), false, "internal/auth/jwt.go\n"),
			[]Candidate{{Kind: Discovery, Summary: "files matching `**/jwt*.go`: internal/auth/jwt.go", Tags: []string{"location"}, Files: []string{"internal/auth/jwt.go"}, Turn: 1}}},
		{"grep naming two files", new(stream).start().tool("grep", map[string]any{"pattern": "func ParseToken", "glob": "*.go"}, false,
			"internal/auth/jwt.go:12:func ParseToken(s string) (*Token, error) {\ninternal/auth/jwt_test.go:40:func ParseTokenHelper() {}\ninternal/auth/jwt.go:90:// ParseToken again\n"),
			[]Candidate{{Kind: Discovery, Summary: "`func ParseToken` is in internal/auth/jwt.go, internal/auth/jwt_test.go", Tags: []string{"location"},
				Files: []string{"internal/auth/jwt.go", "internal/auth/jwt_test.go"}, Turn: 1}}},
		{"claude Grep files-only listing", new(stream).start().tool("Grep", map[string]any{"pattern": "retryBudget"}, false, "Found 1 file\npkg/retry/budget.go\n"),
			[]Candidate{{Kind: Discovery, Summary: "`retryBudget` is in pkg/retry/budget.go", Tags: []string{"location"}, Files: []string{"pkg/retry/budget.go"}, Turn: 1}}},
		{"grep lines longer than the preview, whole", new(stream).start().tool("grep", map[string]any{"pattern": "x+"}, false, "a/b.go:1:"+longLine+"\n"),
			[]Candidate{{Kind: Discovery, Summary: "`x+` is in a/b.go", Tags: []string{"location"}, Files: []string{"a/b.go"}, Turn: 1}}},
		{"glob with ten matches", new(stream).start().tool("glob", glob("internal/x/*.go"), false, ten.String()), nil},
		{"glob with four matches", new(stream).start().tool("glob", glob("*.go"), false, "a.go\nb.go\nc.go\nd.go\n"), nil},
		{"no files", new(stream).start().tool("glob", glob("**/*.py"), false, "no files match **/*.py"), nil},
		{"no matches", new(stream).start().tool("grep", map[string]any{"pattern": "zebra"}, false, "no matches\n"), nil},
		{"an error", new(stream).start().tool("grep", map[string]any{"pattern": "("}, true, "pattern \"(\" is not a valid Go (RE2) regular expression"), nil},
		{"a literal glob", new(stream).start().tool("glob", glob("internal/auth/jwt.go"), false, "internal/auth/jwt.go\n"), nil},
		{"more not shown", new(stream).start().tool("grep", map[string]any{"pattern": "x"}, false, "a.go:1:x\n[more matches not shown: output limit reached; narrow the pattern, path or glob]\n"), nil},
		{"cut in the middle", new(stream).start().tool("grep", map[string]any{"pattern": "x"}, false,
			"a.go:1:"+longLine+"\nb.go:1:"+longLine+"\nc.go:1:"+longLine+"\nd.go:1:"+longLine+"\n"), nil},
		{"repeated", new(stream).start().tool("glob", glob("**/jwt*.go"), false, "internal/auth/jwt.go\n").
			tool("glob", glob("**/jwt*.go"), false, "internal/auth/jwt.go\n"),
			[]Candidate{{Kind: Discovery, Summary: "files matching `**/jwt*.go`: internal/auth/jwt.go", Tags: []string{"location"}, Files: []string{"internal/auth/jwt.go"}, Turn: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := run(NewExtractor(all), "t", tt.s)
			if diff := cmp.Diff(tt.want, got, cmpIgnoreDetail); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
	if got := run(NewExtractor(ExtractConfig{Errors: true}), "t", new(stream).start().tool("glob", glob("**/jwt*.go"), false, "a/jwt.go\n")); len(got) != 0 {
		t.Errorf("discoveries disabled: %+v", got)
	}
}

func TestStatements(t *testing.T) {
	t.Parallel()
	st := func(summary string, files ...string) Candidate {
		return Candidate{Kind: Statement, Summary: summary, Tags: []string{"statement"}, Files: files, Turn: 1}
	}
	tests := []struct {
		name, text string
		want       []Candidate
	}{
		{"found that", "I ran the suite. I found that the JWT library rejects tokens without an iat claim. Fixing it now.",
			[]Candidate{st("I found that the JWT library rejects tokens without an iat claim.")}},
		{"note with a path", "**Note:** the fixtures in testdata/golden/ are regenerated by `go test -update`.\n\nNext I will edit the parser.",
			[]Candidate{st("Note: the fixtures in testdata/golden/ are regenerated by `go test -update`.", "testdata/golden")}},
		{"paths and versions do not end a sentence", "It turns out config.yaml is read by internal/config/load.go before v1.2 flags apply!",
			[]Candidate{st("It turns out config.yaml is read by internal/config/load.go before v1.2 flags apply!", "config.yaml", "internal/config/load.go")}},
		{"a question", "Did it turn out that the cache is stale? Important: is the cache per worktree?", nil},
		{"too short", "Note: fixed it. Turns out: typo.", nil},
		{"hypothetical", "If it turns out the migration is slow, we batch it.", nil},
		{"negated", "I haven't found that function anywhere in the tree yet.", nil},
		{"negated, plain", "I did not find that helpful, and never found that file.", nil},
		{"a negation further back does not count", "No tests cover it, but I found that the parser drops tabs.",
			[]Candidate{st("No tests cover it, but I found that the parser drops tabs.")}},
		{"no marker", "The JWT library rejects tokens without an iat claim.", nil},
		{"code is skipped", "```go\n// Note: this comment is inside a code block, not a statement\n```", nil},
		{"at most three", "Note: alpha beta gamma delta one.\nNote: alpha beta gamma delta two.\nNote: alpha beta gamma delta three.\nNote: alpha beta gamma delta four.",
			[]Candidate{st("Note: alpha beta gamma delta one."), st("Note: alpha beta gamma delta two."), st("Note: alpha beta gamma delta three.")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := run(NewExtractor(all), "t", new(stream).start().text(tt.text))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatementsOncePerTaskAndClipped(t *testing.T) {
	t.Parallel()
	x := NewExtractor(all)
	long := "Turns out " + strings.Repeat("the build cache grows ", 20) + "without bound."
	s := new(stream).start().text(long).start().text(long)
	got := run(x, "t", s)
	if len(got) != 1 {
		t.Fatalf("want one candidate, got %d", len(got))
	}
	if n := utf8.RuneCountInString(got[0].Summary); n > maxSummary || !strings.HasSuffix(got[0].Summary, "…") {
		t.Errorf("summary of %d runes: %q", n, got[0].Summary)
	}
	if got := run(NewExtractor(ExtractConfig{}), "t", new(stream).start().text(long)); len(got) != 0 {
		t.Errorf("statements disabled: %+v", got)
	}
}

func TestExplicit(t *testing.T) {
	t.Parallel()
	x := NewExtractor(ExtractConfig{}) // explicit learnings need no rule
	s := new(stream).start().
		tool("record_learning", map[string]any{"summary": "  Run make generate before go build; stubs live in gen/proto/.", "detail": "Otherwise gen/proto is stale.", "tags": []string{"build"}}, false, "Learning recorded.").
		learning("Run make generate before go build; stubs live in gen/proto/.", "build")
	got := run(x, "t", s)
	want := []Candidate{{
		Kind:    Explicit,
		Summary: "Run make generate before go build; stubs live in gen/proto/.",
		Detail:  "Otherwise gen/proto is stale.",
		Tags:    []string{"build"},
		Files:   []string{"gen/proto"},
		Turn:    1,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

func TestTurnDigest(t *testing.T) {
	t.Parallel()
	x := NewExtractor(all)
	if d := x.TurnDigest("t"); d != "" {
		t.Errorf("digest of an unknown task: %q", d)
	}
	run(x, "t", new(stream).start().text("Old turn.").end())
	s := &stream{turn: 1}
	s.start().text("Let me run the tests.").
		tool("bash", bash("go test ./auth"), true, goTestFailure).
		tool("edit_file", map[string]any{"path": "auth/token.go", "old": "a", "new": "b"}, false, "Edited.", "auth/token.go").
		tool("mcp__db__query", map[string]any{"sql": "select 1"}, false, "1").end()
	run(x, "t", s)
	want := `turn 2:
assistant: Let me run the tests.
call bash: go test ./auth
result bash: ERROR — --- FAIL: TestToken (0.00s) token_test.go:12: jwt: token has no iat claim FAIL FAIL	example.com/app/auth	0.003s FAIL [exit code 1]
call edit_file: auth/token.go
result edit_file: ok — Edited.
changed auth/token.go (modified)
call mcp__db__query: {"sql":"select 1"}
result mcp__db__query: ok — 1
`
	// words.OneLine turns tabs into spaces.
	want = strings.ReplaceAll(want, "\t", " ")
	if diff := cmp.Diff(want, x.TurnDigest("t")); diff != "" {
		t.Errorf("digest (-want +got):\n%s", diff)
	}
}

func TestTurnDigestBounded(t *testing.T) {
	t.Parallel()
	x := NewExtractor(all)
	s := new(stream).start().text("Plan: " + strings.Repeat("word ", 400))
	for i := range 500 {
		s.tool("bash", bash(fmt.Sprintf("echo %d %s", i, strings.Repeat("é", 300))), i%2 == 0, strings.Repeat("output ", 200))
	}
	s.text("Last words.")
	run(x, "t", s)
	d := x.TurnDigest("t")
	if len(d) > maxDigest || !utf8.ValidString(d) {
		t.Errorf("digest of %d bytes (valid UTF-8 %v)", len(d), utf8.ValidString(d))
	}
	for _, w := range []string{"turn 1:", "assistant: Plan:", "lines left out", "assistant: Last words."} {
		if !strings.Contains(d, w) {
			t.Errorf("digest misses %q", w)
		}
	}
	x.Observe("t", event.TurnStarted{Turn: 2})
	if d := x.TurnDigest("t"); d != "" {
		t.Errorf("a new turn starts empty, got %q", d)
	}
}
