package stuck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// stuckCase is a stream in which a task is stuck in one pattern. Each
// occurrence of the pattern is marked; the check must find it at or before
// the pattern's count.
type stuckCase struct {
	name  string
	check Check
	want  int    // the pattern's count: flagged at or before this occurrence
	unit  string // what one occurrence is, for the table
	exact int    // 1: the finding must be Exact; -1: must not be; 0: either
	tier2 bool   // the finding must be Tier2Only
	// named: the evidence must name marked steps only (and at least min).
	named bool
	min   int
	build func(s *stream)
}

func stuckCases() []stuckCase {
	const pay = "internal/pay/pay.go"
	goTest := func(out string) call { return bash("go test ./internal/pay/", out).failed() }
	return []stuckCase{
		{name: "repeat/exact read of the same file", check: Repeat, want: 4, unit: "reads", exact: 1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for range 4 {
					s.turn("Let me look at the handler again.", read("internal/pay/handler.go", handlerGo))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "repeat/poll whose output differs only in a clock", check: Repeat, want: 4, unit: "polls", exact: -1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for i := range 6 {
					out := fmt.Sprintf(`{"conclusion":"","status":"in_progress","updatedAt":"2026-11-21T09:%02d:%02dZ"}`, 3+i, 7*i%60)
					s.turn("The CI run is still going; checking again.", bash("sleep 30 && gh run view 4242 --json status,conclusion,updatedAt", out))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "failing/exact compile error", check: Failing, want: 3, unit: "failures", exact: 1, named: true, min: 3,
			build: func(s *stream) {
				s.prelude()
				for range 3 {
					s.turn("Building again.", bash("go build ./...", buildErr).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "failing/command with extra spaces, reordered flags, other quoting", check: Failing, want: 3, unit: "failures", named: true, min: 3,
			build: func(s *stream) {
				s.prelude()
				out := "--- FAIL: TestCharge (0.00s)\n    pay_test.go:88: Charge(100) = <nil>, want ErrLimit\nFAIL\nFAIL\tgithub.com/acme/shop/internal/pay\t0.214s\nFAIL"
				for _, cmd := range []string{
					"go test -count=1 -race -run TestCharge ./internal/pay/...",
					"go  test   -race  -count=1 -run   TestCharge ./internal/pay/...",
					`go test "-race" '-count=1' -run "TestCharge" ` + testRoot + `/internal/pay/...`,
				} {
					s.turn("Running the pay tests.", bash(cmd, out).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "repeat/same error at another line number", check: Repeat, want: 4, unit: "runs", exact: -1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for i := range 4 {
					s.turn("Running the tests.", goTest(fmt.Sprintf("--- FAIL: TestCharge (0.01s)\n    pay_test.go:%d: ledger rejected the entry\nFAIL\nFAIL\tgithub.com/acme/shop/internal/pay\t0.031s\nFAIL", 88+3*i)))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "repeat/same panic at another address", check: Repeat, want: 4, unit: "runs", exact: -1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for i := range 4 {
					s.turn("Running the tests.", goTest(fmt.Sprintf("--- FAIL: TestCharge (0.00s)\npanic: runtime error: invalid memory address or nil pointer dereference [recovered]\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x%x]\n\ngoroutine %d [running]:\ngithub.com/acme/shop/internal/ledger.(*Ledger).Post(0x0, {0x%x, 0x5})\n\tledger.go:42 +0x1c\nFAIL\tgithub.com/acme/shop/internal/pay\t0.019s", 0x10a3f5c+0x40*i, 17+i, 0xc000123456+0x1a0*i)))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "repeat/same error at another time", check: Repeat, want: 4, unit: "runs", exact: -1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for i := range 4 {
					s.turn("Starting the server to reproduce.", bash("go run ./cmd/shop --config config/dev.yaml", fmt.Sprintf("time=2026-11-21T09:%02d:%02d.%03dZ level=ERROR msg=\"listen failed\" err=\"listen tcp :8080: bind: address already in use\"\nexit status 1", 4+i, 11*i%60, 137*i%1000)).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "repeat/same error in another temp dir", check: Repeat, want: 4, unit: "runs", exact: -1, named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				for i := range 4 {
					s.turn("Running the tests.", goTest(fmt.Sprintf("# github.com/acme/shop/internal/pay.test\nlink: open /tmp/go-build%d/b001/_pkg_.a: no such file or directory\nFAIL\tgithub.com/acme/shop/internal/pay [build failed]", 3141592+271*i)))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "failing/same edit retried with a cosmetic change", check: Failing, want: 3, unit: "failed edits", exact: -1, named: true, min: 3,
			build: func(s *stream) {
				s.prelude()
				old := "func Charge(l *ledger.Ledger, account string, amount int64) error {\n\tif amount < 0 {"
				neu := "func Charge(l *ledger.Ledger, account string, amount int64) error {\n\tif amount <= 0 || amount > Limit {"
				for _, e := range []call{
					editFails(pay, old, neu),
					editFails(testRoot+"/"+pay, old+"\n", neu),
					editFails("./"+pay, strings.Replace(old, "error {", "error  {", 1), neu+" "),
				} {
					s.turn("Tightening the amount check.", e)
					s.mark(event.KindToolResult)
				}
			}},
		{name: "monologue/the same message with nothing between", check: Monologue, want: 3, unit: "messages", exact: -1, named: true, min: 3,
			build: func(s *stream) {
				s.prelude()
				for i := range 3 {
					s.turn(fmt.Sprintf("I have fixed the rounding bug in Charge; the %d tests should pass now. Next I will run them.", 12+i))
					s.mark(event.KindText)
				}
			}},
		{name: "alternation/A-B-A-B", check: Alternation, want: 6, unit: "results", named: true, min: 6,
			build: func(s *stream) {
				s.prelude()
				for range 3 {
					s.turn("Checking the config.", bash("cat config/dev.yaml", "listen: :8080\nledger:\n  dsn: postgres://localhost/shop\n  timeout: 5s"))
					s.mark(event.KindToolResult)
					s.turn("Starting the server.", bash("go run ./cmd/shop --config config/dev.yaml", "config/dev.yaml: line 4: field timeout not found in type config.Ledger\nexit status 1").failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "dense/loop interleaved with other calls", check: Dense, want: 6, unit: "identical results", exact: 1, named: true, min: 6,
			build: func(s *stream) {
				s.prelude()
				status := func() {
					s.turn("", bash("git status --short", " M internal/pay/pay.go\n?? internal/pay/limit.go"))
					s.mark(event.KindToolResult)
				}
				for i, f := range []string{"ledger.go", "handler.go", "pay_test.go", "limit.go"} {
					if i == 0 {
						status()
					}
					s.turn("", read("internal/pay/"+f, "package pay // "+f))
					status()
					status()
				}
			}},
		{name: "context-errors/overflowing again and again", check: ContextErrors, want: 3, unit: "overflows",
			build: func(s *stream) {
				s.prelude()
				for i := range 3 {
					s.contextError(212_345 + 1000*i)
					s.mark(event.KindModelError)
				}
			}},
		{name: "empty-replies/turns with no text and no call", check: EmptyReplies, want: 3, unit: "empty turns",
			build: func(s *stream) {
				s.engine = "claude" // as a CLI engine reports them; TestNativeEmptyReplies has the native agent's
				s.prelude()
				for range 3 {
					s.emptyTurn()
					s.mark(event.KindTurnEnded)
				}
			}},
		{name: "apologies/without a successful action", check: Apologies, want: 3, unit: "apologies", named: true, min: 3,
			build: func(s *stream) {
				s.prelude()
				for _, t := range []struct{ text, cmd, out string }{
					{"Sorry, that import was wrong. Let me fix the module path.", "go build ./internal/pay", buildErr},
					{"My apologies, the ledger package is under pkg/. Trying that.", "go vet ./pkg/ledger", "pattern ./pkg/ledger: directory prefix pkg/ledger does not contain main module"},
					{"I apologize for the confusion; I will check the module name instead.", "grep -n module go.mod", "grep: go.mod: No such file or directory"},
				} {
					s.turn(t.text, bash(t.cmd, t.out).failed())
					s.mark(event.KindText)
				}
			}},
		{name: "no-progress/talking without acting, by Tick", check: NoProgress, want: 10, unit: "minutes idle",
			build: func(s *stream) {
				s.prelude()
				p := s.now
				for k := 1; k <= 15; k++ {
					if k%3 == 0 {
						s.turn(fmt.Sprintf("Thinking about the design (%s): should the limit live in the ledger or in pay?", strings.Repeat("again ", k/3)))
					}
					s.now = p.Add(time.Duration(k) * time.Minute)
					s.tick()
					s.mark("tick")
				}
			}},
		{name: "runaway/tokens since progress", check: Runaway, want: 5, unit: "turns of 60k tokens",
			build: func(s *stream) {
				s.prelude()
				s.in, s.out, s.usd = 58_000, 2_000, 0.2
				for _, w := range []string{"PostEntry", "RefundEntry", "ErrLimit", "MaxCharge", "ledgerDSN", "chargeLimit"} {
					s.turn("", bash("grep -rn "+w+" internal/", "exit status 1").failed())
					s.mark(event.KindUsage)
				}
			}},
		{name: "runaway/cost since progress", check: Runaway, want: 4, unit: "turns of $0.75",
			build: func(s *stream) {
				s.prelude()
				s.in, s.out, s.usd = 9_000, 1_000, 0.75
				for _, w := range []string{"PostEntry", "RefundEntry", "ErrLimit", "MaxCharge", "ledgerDSN"} {
					s.turn("", bash("grep -rn "+w+" internal/", "exit status 1").failed())
					s.mark(event.KindUsage)
				}
			}},
		{name: "wandering/30 distinct reads, no write", check: Wandering, want: 30, unit: "results", tier2: true, named: true, min: 5,
			build: func(s *stream) {
				for i := range 32 {
					f := fmt.Sprintf("internal/pkg%02d/doc.go", i)
					s.turn("", read(f, "// Package pkg"+fmt.Sprint(i)+" does part "+fmt.Sprint(i)+" of the shop.\npackage pkg"))
					s.mark(event.KindToolResult)
				}
			}},
	}
}

// TestStuckScenarios checks that each stuck pattern is found at or before
// its count, with the right check and evidence naming its steps, and logs
// the detection table.
func TestStuckScenarios(t *testing.T) {
	t.Parallel()
	var rows []string
	for _, c := range stuckCases() {
		t.Run(c.name, func(t *testing.T) {
			s := newStream("t-stuck")
			c.build(s)
			hs := run(s, Config{}, true)
			h, ok := first(hs, c.check)
			if !ok {
				t.Fatalf("no %s finding; got:%s", c.check, describe(t, s.items, hs))
			}
			rows = append(rows, fmt.Sprintf("%-66s %-14s %3d %-3d %-20s step %-3d exact=%v", c.name, c.check, h.occ, c.want, c.unit, h.f.Step, h.f.Exact))
			if h.occ > c.want {
				t.Errorf("%s found at occurrence %d, want at or before %d:%s", c.check, h.occ, c.want, describe(t, s.items, hs))
			}
			if h.f.Tier2Only != c.tier2 {
				t.Errorf("Tier2Only = %v, want %v", h.f.Tier2Only, c.tier2)
			}
			if c.exact != 0 && h.f.Exact != (c.exact > 0) {
				t.Errorf("Exact = %v, want %v", h.f.Exact, c.exact > 0)
			}
			if h.f.Diagnosis == "" || h.f.Key == "" || h.f.Status == "" {
				t.Errorf("finding lacks a diagnosis, key or status: %+v", h.f)
			}
			if len(h.f.Evidence) == 0 {
				t.Fatalf("finding has no evidence: %+v", h.f)
			}
			for _, e := range h.f.Evidence {
				if e.What == "" {
					t.Errorf("evidence at step %d says nothing", e.Step)
				}
			}
			if !c.named {
				return
			}
			marked := markedSteps(s.items)
			if len(h.f.Evidence) < c.min {
				t.Errorf("%d evidence steps, want at least %d:%s", len(h.f.Evidence), c.min, describe(t, s.items, []hit{h}))
			}
			for _, e := range h.f.Evidence {
				if !marked[e.Step] {
					t.Errorf("evidence names step %d, which is not one of the pattern's:%s", e.Step, describe(t, s.items, []hit{h}))
				}
			}
		})
	}
	t.Logf("detection table (found at occurrence / pattern's count):\n%-66s %-14s %3s %-3s %-20s\n%s", "scenario", "check", "at", "of", "unit", strings.Join(rows, "\n"))
}

// TestHealthyScenarios checks that tasks making progress are never flagged,
// but for Tier2Only signals.
func TestHealthyScenarios(t *testing.T) {
	t.Parallel()
	for _, c := range healthyCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStream("t-healthy")
			c.build(s)
			hs := run(s, Config{}, true)
			if bad := actionable(hs); len(bad) > 0 {
				t.Errorf("a healthy task was flagged:%s", describe(t, s.items, bad))
			}
			for _, h := range hs {
				if h.f.Tier2Only && h.f.Check != Wandering {
					t.Errorf("Tier2Only finding of check %s, want only wandering", h.f.Check)
				}
			}
		})
	}
}

type healthyCase struct {
	name  string
	build func(s *stream)
}

func healthyCases() []healthyCase {
	return []healthyCase{
		{name: "200 iterations of edit then test, failing differently, then passing", build: func(s *stream) {
			s.prelude()
			for i := range 200 {
				f := fmt.Sprintf("internal/pay/step%03d.go", i%17)
				s.turn(fmt.Sprintf("Fixing failure %d.", i), edit(f, fmt.Sprintf("const v%d = %d", i, i), fmt.Sprintf("const v%d = %d // fixed %s", i+1, i*i, strings.Repeat("x", i%5))))
				out := fmt.Sprintf("--- FAIL: TestStep%d\n    step_test.go:%d: %s\nFAIL", i, 10+i, failureText(i))
				c := bash("go test ./internal/pay/", out).failed()
				if i >= 190 {
					c = bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.412s")
				}
				s.turn("", c)
			}
		}},
		{name: "50k tokens per turn, files changing", build: func(s *stream) {
			s.prelude()
			s.in, s.out, s.usd = 48_000, 2_000, 0.18
			for i := range 40 {
				s.turn("Next part of the refactor.", write(fmt.Sprintf("internal/pay/part%02d.go", i), fmt.Sprintf("package pay\n\n// Part%d of the refactor.\nfunc Part%d() {}\n", i, i)))
			}
		}},
		{name: "a tool running for 30 minutes with ticks meanwhile", build: func(s *stream) {
			s.prelude()
			s.turns++
			s.emit(event.TurnStarted{Turn: s.turns, Engine: "native"})
			s.emit(event.ToolCall{Turn: s.turns, CallID: "toolu_slow", Name: "bash", Args: args("command", "go test -race -count=1 ./...")})
			s.usage()
			s.wait(30*time.Minute, time.Minute)
			out := "ok  \tgithub.com/acme/shop/internal/pay\t1740.2s"
			s.emit(event.ToolResult{Turn: s.turns, CallID: "toolu_slow", Name: "bash", Size: len(out), Preview: out, Hash: event.ContentHash(out), DurationMs: 30 * 60 * 1000})
			s.emit(event.TurnEnded{Turn: s.turns, StopReason: "tool_use"})
			s.wait(3*time.Minute, time.Minute)
			s.turn("All green.", write("CHANGELOG.md", "- pay: charge limit"))
		}},
		{name: "a flaky command failing twice then passing", build: func(s *stream) {
			s.prelude()
			for i := range 2 {
				s.turn("The network test is flaky; running it again.", bash("go test -run TestRemoteLedger ./internal/ledger/",
					fmt.Sprintf("--- FAIL: TestRemoteLedger (5.0%ds)\n    remote_test.go:31: dial tcp 127.0.0.1:%d: i/o timeout\nFAIL", i, 40000+i*17)).failed())
			}
			s.turn("Once more.", bash("go test -run TestRemoteLedger ./internal/ledger/", "ok  \tgithub.com/acme/shop/internal/ledger\t0.8s"))
			s.turn("Moving on.", edit("internal/ledger/remote.go", "timeout = 5 * time.Second", "timeout = 15 * time.Second"))
		}},
		{name: "reading many different files, then writing", build: func(s *stream) {
			s.prelude()
			for round := range 3 {
				for i := range 20 {
					f := fmt.Sprintf("internal/mod%d/file%02d.go", round, i)
					s.turn("", read(f, sourceFile(round*20+i)))
				}
				s.turn("Now the change.", write(fmt.Sprintf("internal/mod%d/new.go", round), "package mod\n"))
			}
		}},
		{name: "go test ./... after each change, identical ok output", build: func(s *stream) {
			s.prelude()
			for i := range 30 {
				f := fmt.Sprintf("internal/%s/%s.go", []string{"pay", "ledger", "api", "store"}[i%4], []string{"limit", "audit", "retry", "doc", "errors"}[i%5])
				s.turn("", edit(f, fmt.Sprintf("// TODO(%s)", f), fmt.Sprintf("// %s: handled in %s", strings.Repeat("done ", 1+i%3), f)))
				s.turn("", bash("go test ./...", fmt.Sprintf("ok  \tgithub.com/acme/shop/internal/api\t0.%03ds\nok  \tgithub.com/acme/shop/internal/ledger\t0.%03ds\nok  \tgithub.com/acme/shop/internal/pay\t(cached)", 100+i, 200+i)))
			}
		}},
	}
}

func failureText(i int) string {
	msgs := []string{
		"Charge(0) returned nil, want ErrAmount",
		"ledger balance = -100, want 0 after refund",
		"handler status = 500, want 422 for an unknown account",
		"limit not enforced for the admin account",
		"refund of a refund was accepted",
		"audit log missing the charge entry",
		"currency mismatch between EUR and USD not reported",
	}
	return msgs[i%len(msgs)]
}

// sourceFile returns the i'th of a set of different source files.
func sourceFile(i int) string {
	nouns := []string{"account", "ledger", "refund", "invoice", "currency", "limit", "audit", "session", "customer", "receipt", "tax", "discount", "webhook"}
	verbs := []string{"validates", "stores", "renders", "parses", "reconciles", "exports", "retries", "caches", "signs", "rounds", "merges"}
	n, v, m := nouns[i%len(nouns)], verbs[i%len(verbs)], nouns[(i*7+3)%len(nouns)]
	return fmt.Sprintf("package %s\n\n// %s %s the %s of a %s before it reaches the %s.\nfunc %s%s(x %s) error {\n\treturn check%s(x)\n}\n",
		n, strings.ToUpper(v[:1])+v[1:], v, m, n, m, strings.ToUpper(v[:1])+v[1:], strings.ToUpper(n[:1])+n[1:], m, strings.ToUpper(m[:1])+m[1:])
}

// The clock and spend checks wait for the grace period: a task that has
// just started (or resumed) is not idle or runaway yet, however long its
// first model call takes or costs.
func TestGracePeriod(t *testing.T) {
	t.Parallel()
	s := newStream("t-grace")
	s.in, s.out, s.usd = 420_000, 4_000, 4.5   // a huge first prompt
	s.turn("", read("docs/spec.md", "# Spec")) // two steps: the call and its result
	s.wait(45*time.Minute, 5*time.Minute)
	d := New(Config{}, testRoot, t0)
	if hs := feed(d, s.items, true); len(hs) > 0 {
		t.Errorf("flagged within the grace period (%d steps):%s", d.Counters().Steps, describe(t, s.items, hs))
	}
	// One more step ends the grace period: now the clock applies.
	s.turn("", read("docs/spec.md", "# Spec"))
	s.wait(11*time.Minute, time.Minute)
	hs := run(s, Config{}, true)
	if _, ok := first(hs, NoProgress); !ok {
		t.Errorf("no no-progress finding once the grace period was over:%s", describe(t, s.items, hs))
	}
}

// Thresholds come from the config; zero fields take the defaults.
func TestConfigThresholds(t *testing.T) {
	t.Parallel()
	if got := New(Config{}, "", t0).Config(); got != DefaultConfig() {
		t.Errorf("zero config = %+v, want the defaults %+v", got, DefaultConfig())
	}
	s := newStream("t-cfg")
	s.prelude()
	for range 2 {
		s.turn("Building.", bash("go build ./...", buildErr).failed())
	}
	if _, ok := first(run(s, Config{}, true), Failing); ok {
		t.Errorf("failing found after 2 failures with the default of 3")
	}
	if _, ok := first(run(s, Config{Failing: 2}, true), Failing); !ok {
		t.Errorf("failing not found after 2 failures with Failing: 2")
	}
}
